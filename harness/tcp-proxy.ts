/**
 * A TCP proxy on loopback in front of one redis-server, for the network faults the tests and the
 * fault runner inject: stalled directions, delays, replies lost after Redis ran the command, cut
 * connections. No node:test import here.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** Which way bytes flow through the proxy: `up` client -> Redis, `down` Redis -> client. */
export type Direction = 'up' | 'down';

interface Pipe {
  /** Connections are numbered from 0 in the order they were accepted. */
  readonly id: number;
  readonly client: Socket;
  readonly server: Socket;
  /** Set by `dropNextReply`: the next reply from Redis is swallowed and the connection cut. */
  swallowReply: boolean;
}

/**
 * A TCP proxy on loopback between Redis clients and one redis-server, for injecting the network
 * faults this kernel cannot (it has no netem): a stalled direction, a delay, a reply lost after
 * Redis ran the command, connections cut. Without a fault it forwards bytes unchanged.
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #pipes = new Set<Pipe>();
  /** Directions stalled for every connection, present and future. */
  readonly #stalledAll = new Set<Direction>();
  /** Directions stalled for one connection (by id). */
  readonly #stalledOne = new Map<number, Set<Direction>>();
  readonly #held = new Map<Pipe, { up: Buffer[]; down: Buffer[] }>();
  #accepted = 0;
  readonly #delay: Record<Direction, number> = { up: 0, down: 0 };
  #dropArmed: { match: (chunk: Buffer) => boolean; done: () => void } | undefined;

  private constructor(
    server: Server,
    readonly port: number,
  ) {
    this.#server = server;
  }

  /** Starts a proxy on a free loopback port that forwards to `target`. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
    const server = createServer((client) => proxy.#accept(client, target));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy has no address');
    const proxy = new TcpProxy(server, address.port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.#pipes.size;
  }

  /** Ids of the connections open now, in the order they were accepted (a client's first is its command connection). */
  get connectionIds(): number[] {
    return [...this.#pipes].map((pipe) => pipe.id);
  }

  /**
   * Holds every byte flowing in `direction` (nothing is lost) until `resume()`: on every
   * connection, or only on the connection with id `connection`.
   */
  stall(direction: Direction | 'both' = 'both', connection?: number): void {
    let stalled = this.#stalledAll;
    if (connection !== undefined) {
      stalled = this.#stalledOne.get(connection) ?? new Set();
      this.#stalledOne.set(connection, stalled);
    }
    for (const d of directions(direction)) stalled.add(d);
  }

  /** Lets held bytes flow again, in order (on every connection, or only on `connection`). */
  resume(direction: Direction | 'both' = 'both', connection?: number): void {
    if (connection === undefined) {
      for (const d of directions(direction)) this.#stalledAll.delete(d);
      this.#stalledOne.clear();
    } else {
      for (const d of directions(direction)) this.#stalledOne.get(connection)?.delete(d);
    }
    for (const [pipe, held] of this.#held) {
      for (const d of directions(direction)) {
        if (this.#isStalled(pipe, d)) continue;
        const chunks = held[d].splice(0);
        for (const chunk of chunks) this.#write(pipe, d, chunk);
      }
    }
  }

  /** Delays every chunk flowing in `direction` by `ms` (0: no delay). */
  delay(direction: Direction | 'both', ms: number): void {
    for (const d of directions(direction)) this.#delay[d] = ms;
  }

  /**
   * The next chunk a client sends that `match`es is forwarded to Redis; Redis' reply to it is
   * swallowed and both sides of that connection are cut, so the client never learns the outcome of
   * a command Redis ran. Resolves once the connection was cut.
   */
  dropNextReply(match: (chunk: Buffer) => boolean = () => true): Promise<void> {
    return new Promise((resolve) => {
      this.#dropArmed = { match, done: resolve };
    });
  }

  /** Cuts every connection now (clients see a reset). */
  cutAll(): void {
    for (const pipe of [...this.#pipes]) this.#cut(pipe);
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket, target: { readonly host: string; readonly port: number }): void {
    const server = connect(target.port, target.host);
    const pipe: Pipe = { id: this.#accepted++, client, server, swallowReply: false };
    this.#pipes.add(pipe);
    this.#held.set(pipe, { up: [], down: [] });
    client.setNoDelay(true);
    server.setNoDelay(true);
    client.on('data', (chunk: Buffer) => {
      const armed = this.#dropArmed;
      if (armed?.match(chunk)) {
        this.#dropArmed = undefined;
        pipe.swallowReply = true;
        // Cut once Redis answered (it ran the command), or soon if it never does.
        setTimeout(() => {
          if (this.#pipes.has(pipe)) this.#cut(pipe);
          armed.done();
        }, 2_000).unref();
        server.once('data', () => {
          this.#cut(pipe);
          armed.done();
        });
      }
      this.#forward(pipe, 'up', chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (pipe.swallowReply) return;
      this.#forward(pipe, 'down', chunk);
    });
    const end = (): void => this.#cut(pipe);
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  }

  #forward(pipe: Pipe, direction: Direction, chunk: Buffer): void {
    const ms = this.#delay[direction];
    if (ms > 0) setTimeout(() => this.#pass(pipe, direction, chunk), ms).unref();
    else this.#pass(pipe, direction, chunk);
  }

  #pass(pipe: Pipe, direction: Direction, chunk: Buffer): void {
    if (this.#isStalled(pipe, direction)) this.#held.get(pipe)?.[direction].push(chunk);
    else this.#write(pipe, direction, chunk);
  }

  #isStalled(pipe: Pipe, direction: Direction): boolean {
    return this.#stalledAll.has(direction) || (this.#stalledOne.get(pipe.id)?.has(direction) ?? false);
  }

  #write(pipe: Pipe, direction: Direction, chunk: Buffer): void {
    const to = direction === 'up' ? pipe.server : pipe.client;
    if (!to.destroyed) to.write(chunk);
  }

  #cut(pipe: Pipe): void {
    if (!this.#pipes.delete(pipe)) return;
    this.#held.delete(pipe);
    pipe.client.destroy();
    pipe.server.destroy();
  }
}

function directions(direction: Direction | 'both'): Direction[] {
  return direction === 'both' ? ['up', 'down'] : [direction];
}
