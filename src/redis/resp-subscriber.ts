/**
 * A sharded subscriber of latchkey's own over one socket, for clients that cannot hear a sharded
 * message on a single server (Valkey GLIDE's standalone client subscribes only to classic channels;
 * Bun's client drops `smessage`). It speaks just what a subscriber needs of RESP2: AUTH, SSUBSCRIBE,
 * SUNSUBSCRIBE and the messages; it reconnects by itself and subscribes every channel again.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import type { ShardedSubscriber } from './node-redis-shape.js';
import { retryPause } from './script-runner.js';

/** Where the subscriber connects, and how it authenticates. */
export interface RespEndpoint {
  readonly host: string;
  readonly port: number;
  /** TLS, with these options (servername defaults to `host`); undefined: plain TCP. */
  readonly tls?: ConnectionOptions;
  readonly username?: string;
  readonly password?: string;
}

type Reply = string | number | null | Error | Reply[];

/** Redis' error reply, named as the other clients name theirs (kept as is by the classification). */
class ReplyError extends Error {
  override name = 'ReplyError';
}

/** One reply from `buffer` at `at`: the value and where the next starts, or undefined while incomplete. */
function parse(buffer: Buffer, at: number): [Reply, number] | undefined {
  const end = buffer.indexOf('\r\n', at);
  if (end === -1) return undefined;
  const line = buffer.toString('utf8', at + 1, end);
  const next = end + 2;
  switch (buffer[at]) {
    case 0x2b: // +
      return [line, next];
    case 0x2d: // -
      return [new ReplyError(line), next];
    case 0x3a: // :
      return [Number(line), next];
    case 0x24: {
      // $
      const length = Number(line);
      if (length < 0) return [null, next];
      if (buffer.length < next + length + 2) return undefined;
      return [buffer.toString('utf8', next, next + length), next + length + 2];
    }
    case 0x2a: {
      // *
      const count = Number(line);
      if (count < 0) return [null, next];
      const items: Reply[] = [];
      let offset = next;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, offset);
        if (item === undefined) return undefined;
        items.push(item[0]);
        offset = item[1];
      }
      return [items, offset];
    }
    default:
      throw new Error(`Unexpected reply from the subscriber's server: ${line.slice(0, 40)}`);
  }
}

function encode(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
}

export class RespSubscriber implements ShardedSubscriber {
  readonly ready: Promise<unknown>;
  readonly #listeners = new Map<string, (message: string) => void>();
  /** Replies awaited, in the order their commands were sent. */
  #pending: { resolve(reply: Reply): void; reject(error: Error): void }[] = [];
  #socket: Socket | undefined;
  #connected = false;
  #closed = false;
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;

  /** `reconnected` is called after a reconnect subscribed the channels again (messages may have been lost). */
  constructor(
    private readonly endpoint: RespEndpoint,
    private readonly reconnected: () => void,
  ) {
    this.ready = this.#connect();
  }

  async sSubscribe(channel: string, listener: (message: string) => void): Promise<unknown> {
    this.#listeners.set(channel, listener);
    try {
      return await this.#command(['SSUBSCRIBE', channel]);
    } catch (error) {
      this.#listeners.delete(channel);
      throw error;
    }
  }

  sUnsubscribe(channel: string): Promise<unknown> {
    this.#listeners.delete(channel);
    return this.#command(['SUNSUBSCRIBE', channel]);
  }

  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#socket?.destroy();
    return Promise.resolve();
  }

  #command(args: readonly string[]): Promise<Reply> {
    const socket = this.#socket;
    if (!this.#connected || !socket) return Promise.reject(new Error('The subscriber connection is down'));
    return new Promise<Reply>((resolve, reject) => {
      this.#pending.push({ resolve, reject });
      socket.write(encode(args));
    });
  }

  /** Connects, authenticates, and (after the first time) subscribes every channel again. */
  async #connect(): Promise<void> {
    const { host, port, tls, username, password } = this.endpoint;
    const socket = tls ? connectTls({ host, port, servername: host, ...tls }) : connectTcp({ host, port });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    let buffered: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      let at = 0;
      for (let reply = parse(buffered, at); reply !== undefined; reply = parse(buffered, at)) {
        at = reply[1];
        this.#receive(reply[0]);
      }
      buffered = buffered.subarray(at);
    });
    // The error is reported through the calls that fail; 'close' follows it.
    socket.on('error', () => undefined);
    socket.on('close', () => this.#lost(socket));
    await new Promise<void>((resolve, reject) => {
      socket.once(tls ? 'secureConnect' : 'connect', resolve);
      socket.once('close', () => reject(new Error(`Could not connect the subscriber to ${host}:${port}`)));
    });
    this.#connected = true;
    if (password !== undefined) await this.#command(username ? ['AUTH', username, password] : ['AUTH', password]);
    this.#failures = 0;
  }

  #receive(reply: Reply): void {
    if (Array.isArray(reply) && reply[0] === 'smessage') {
      this.#listeners.get(String(reply[1]))?.(String(reply[2]));
      return;
    }
    const waiting = this.#pending.shift();
    if (reply instanceof Error) waiting?.reject(reply);
    else waiting?.resolve(reply);
  }

  /** The socket closed: fail what waits on it, and unless closed on purpose, connect again. */
  #lost(socket: Socket): void {
    if (this.#socket !== socket) return;
    this.#connected = false;
    const pending = this.#pending;
    this.#pending = [];
    for (const waiting of pending) waiting.reject(new Error('The subscriber connection closed'));
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#reconnect(), retryPause(this.#failures++));
    // Reconnecting must not keep the process alive: a client that is not shut down may still exit.
    this.#timer.unref();
  }

  async #reconnect(): Promise<void> {
    try {
      await this.#connect();
      await Promise.all([...this.#listeners.keys()].map((channel) => this.#command(['SSUBSCRIBE', channel])));
      this.reconnected();
    } catch {
      // The socket's close (already seen, or to come) schedules the next attempt.
      if (this.#connected) this.#socket?.destroy();
    }
  }
}
