/**
 * The adapter for Bun's built-in Redis client (`Bun.redis`, `new RedisClient(url)` from `bun`).
 * Scripts go through `send()`; waits listen on a subscriber of latchkey's own (Bun's client drops
 * sharded messages), opened at the client's URL, which Bun does not tell: `bunRedisConnection()`
 * takes it. Standalone only (Bun's client has no Cluster); loss is found by renewal.
 */
import type { ChannelListener, LuaScript, RedisConnection, ScriptArg, ScriptReply } from './connection.js';
import { OwnSubscriber } from './own-subscriber.js';
import { RespSubscriber, type RespEndpoint } from './resp-subscriber.js';
import {
  classifyRefusal,
  commandTail,
  evalWithFallback,
  WAIT_REFUSED,
  type IsReplyError,
  type ScriptSender,
} from './script-sender.js';

/** The part of Bun's `RedisClient` latchkey uses (typed here so `bun` is never imported). */
export interface BunRedisLike {
  send(command: string, args: string[]): Promise<unknown>;
  readonly connected: boolean;
}

export function isBunRedis(value: unknown): value is BunRedisLike {
  const candidate = value as (Partial<BunRedisLike> & { sendCommand?: unknown }) | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.send === 'function' &&
    typeof candidate.connected === 'boolean' &&
    candidate.sendCommand === undefined
  );
}

/** `Bun.redis`, the default client, when running on Bun: its URL is known (Bun's own default). */
export function defaultBunClient(): { client: unknown; url: string } | undefined {
  const bun = (globalThis as { Bun?: { redis?: unknown; env?: Record<string, string | undefined> } }).Bun;
  if (!bun) return undefined;
  const env = bun.env ?? {};
  return { client: bun.redis, url: env.REDIS_URL ?? env.VALKEY_URL ?? 'redis://localhost:6379' };
}

/** Bun reports Redis' own replies with this code (and its lost connections with others). */
const isBunReply: IsReplyError = (error) => (error as { code?: unknown }).code === 'ERR_REDIS_SERVER_ERROR';

/** Where a `redis://` / `rediss://` (or `valkey://`, `valkeys://`) URL points, for the subscriber. */
export function endpointOf(url: string): RespEndpoint {
  const parsed = new URL(url);
  const tls = /^(rediss|valkeys|redis\+tls|valkey\+tls):$/.test(parsed.protocol);
  if (!tls && !/^(redis|valkey):$/.test(parsed.protocol)) {
    throw new TypeError(`Expected \`url\` to be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`);
  }
  const decode = (part: string): string | undefined => (part === '' ? undefined : decodeURIComponent(part));
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    tls: tls ? {} : undefined,
    username: decode(parsed.username),
    password: decode(parsed.password),
  };
}

export class BunRedisConnection implements RedisConnection {
  readonly #subscriber: OwnSubscriber;
  readonly #sender: ScriptSender = {
    evalsha: (script, keys, args) => this.client.send('EVALSHA', [script.sha, ...commandTail(keys, args)]),
    eval: (script, keys, args) => this.client.send('EVAL', [script.source, ...commandTail(keys, args)]),
  };

  /** `url` is the one the client was made with (`redis://[user:password@]host:port`). */
  constructor(
    private readonly client: BunRedisLike,
    url: string,
  ) {
    const endpoint = endpointOf(url);
    this.#subscriber = new OwnSubscriber((reconnected) => new RespSubscriber(endpoint, reconnected));
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<ScriptReply> {
    return evalWithFallback(this.#sender, script, keys, args, isBunReply);
  }

  subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    return this.#subscriber.subscribe(channel, listener);
  }

  batchGroup(): string {
    return '';
  }

  async waitForReplicas(_key: string, replicas: number, timeout: number): Promise<number> {
    try {
      return Number(await this.client.send('WAIT', [String(replicas), String(timeout)]));
    } catch (error) {
      throw classifyRefusal(error, 'WAIT', WAIT_REFUSED, isBunReply);
    }
  }

  close(): Promise<void> {
    return this.#subscriber.close();
  }
}

/**
 * Adapts Bun's Redis client for `new LockClient()`: `url` is the one the client was made with
 * (latchkey opens its pub/sub connection there; Bun's client does not tell its URL).
 *
 * @example
 * ```ts
 * import { RedisClient } from 'bun';
 * const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
 * const locks = new LockClient(bunRedisConnection(new RedisClient(url), url));
 * ```
 */
export function bunRedisConnection(client: BunRedisLike, url: string): RedisConnection {
  if (!isBunRedis(client)) throw new TypeError('Expected `client` to be a Bun RedisClient');
  return new BunRedisConnection(client, url);
}
