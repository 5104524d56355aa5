import type { LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';
import { evalWithFallback, subscribeClassified, type ScriptSender } from './errors.js';
import { Subscriptions } from './subscriptions.js';

/** The part of a node-redis (v4+) client latchkey uses (typed here so `redis` is never imported). */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): NodeRedisSubscriber;
  readonly isOpen: boolean;
}

/** The subscriber connection node-redis `duplicate()` returns, as latchkey uses it. */
export interface NodeRedisSubscriber {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): Promise<unknown>;
}

export function isNodeRedis(value: unknown): value is NodeRedisLike {
  const candidate = value as Partial<NodeRedisLike> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.duplicate === 'function' &&
    typeof candidate.isOpen === 'boolean'
  );
}

/** What follows the script in EVALSHA / EVAL: the key count, the keys, the arguments as strings. */
function commandTail(keys: readonly string[], args: readonly ScriptArg[]): string[] {
  return [String(keys.length), ...keys, ...args.map(String)];
}

/**
 * Adapts a connected node-redis v4+ client (standalone or Sentinel). Scripts go through
 * `sendCommand`, which both major versions share; subscriptions use a duplicate connection.
 */
export class NodeRedisConnection implements RedisConnection {
  #subscriber: Promise<NodeRedisSubscriber> | undefined;
  readonly #subscriptions: Subscriptions;
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.client.sendCommand(['EVALSHA', script.sha, ...commandTail(keys, args)]),
    eval: (script, keys, args) => this.client.sendCommand(['EVAL', script.source, ...commandTail(keys, args)]),
  };

  constructor(private readonly client: NodeRedisLike) {
    this.#subscriptions = new Subscriptions(
      async (channel) => {
        const subscriber = await this.#subscriberConnection();
        await subscriber.subscribe(channel, (message) => this.#subscriptions.dispatch(channel, message));
      },
      async (channel) => {
        await (await this.#subscriber)?.unsubscribe(channel);
      },
    );
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    return evalWithFallback(this.#sender, script, keys, args);
  }

  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    return subscribeClassified(this.#subscriptions, channel, listener);
  }

  batchGroup(): string {
    return '';
  }

  async close(): Promise<void> {
    const pending = this.#subscriber;
    this.#subscriber = undefined;
    if (!pending) return;
    const subscriber = await pending.catch(() => undefined);
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect().catch(() => undefined));
  }

  #subscriberConnection(): Promise<NodeRedisSubscriber> {
    this.#subscriber ??= (async () => {
      const subscriber = this.client.duplicate();
      // Errors surface through the calls that fail; the listener keeps them from crashing the process.
      subscriber.on('error', () => undefined);
      await subscriber.connect();
      return subscriber;
    })();
    return this.#subscriber;
  }
}
