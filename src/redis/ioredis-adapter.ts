import type { LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';
import { clusterSlot } from './cluster-slot.js';
import { WriteCoalescer, type CorkableStream } from './coalesce-writes.js';
import { evalWithFallback, subscribeClassified, type ScriptSender } from './errors.js';
import { Subscriptions } from './subscriptions.js';

/** The part of an ioredis `Redis` or `Cluster` latchkey uses (typed here so ioredis is never imported). */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: ScriptArg[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: ScriptArg[]): Promise<unknown>;
  duplicate(): IoredisSubscriber;
  readonly isCluster?: boolean;
  /** A standalone client's socket (ioredis' public `stream`), corked to coalesce one tick's scripts. */
  readonly stream?: CorkableStream;
}

/** The subscriber connection ioredis `duplicate()` returns, as latchkey uses it. */
export interface IoredisSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
}

export function isIoredis(value: unknown): value is IoredisLike {
  const candidate = value as Partial<IoredisLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.evalsha === 'function' &&
    typeof candidate.duplicate === 'function'
  );
}

/** Adapts an ioredis `Redis` (standalone or Sentinel) or `Cluster` client. */
export class IoredisConnection implements RedisConnection {
  #subscriber: IoredisSubscriber | undefined;
  readonly #subscriptions: Subscriptions;
  readonly #writes = new WriteCoalescer();
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.client.evalsha(script.sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => this.client.eval(script.source, keys.length, ...keys, ...args),
  };

  constructor(private readonly client: IoredisLike) {
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        await this.#subscriberConnection().subscribe(channel);
      },
      async (channel) => {
        await this.#subscriber?.unsubscribe(channel);
      },
    );
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    // A Cluster routes each command to a node's socket of its own: nothing to cork here.
    const stream = this.client.isCluster === true ? undefined : this.client.stream;
    this.#writes.beforeWrite(stream);
    const reply = evalWithFallback(this.#sender, script, keys, args);
    this.#writes.afterWrite();
    return reply;
  }

  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    return subscribeClassified(this.#subscriptions, channel, listener);
  }

  batchGroup(key: string): string {
    return this.client.isCluster === true ? String(clusterSlot(key)) : '';
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (!subscriber) return;
    await subscriber.quit().catch(() => subscriber.disconnect());
  }

  #subscriberConnection(): IoredisSubscriber {
    if (!this.#subscriber) {
      const subscriber = this.client.duplicate();
      subscriber.on('message', (channel, message) => this.#subscriptions.dispatch(channel, message));
      // Errors surface through the calls that fail; an 'error' listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }
}
