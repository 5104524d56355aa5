/**
 * Shared by the safety tests: proxies, proxied clients, reading a lock's owners in Redis, and
 * settling promises into values for assertions.
 */
import type { Redis } from 'ioredis';
import { atFileEnd } from '../../harness/cleanup.js';
import { TcpProxy } from '../../harness/tcp-proxy.js';
import type { LockClient, LockClientOptions } from '../../src/index.js';
import { sleep } from '../../harness/eventually.js';
import type { TestServer } from '../../harness/server.js';

/**
 * A TCP proxy in front of `server`, closed when the file ends: after every client made on it later
 * was shut down (the harness runs its clean-ups newest first).
 */
export async function startProxy(server: TestServer): Promise<TcpProxy> {
  const proxy = await TcpProxy.start(server);
  atFileEnd(() => proxy.close());
  return proxy;
}

/**
 * A LockClient whose connections go through `proxy`, with the id of its command connection (ready
 * when this resolves). Its pub/sub connection is opened later, when it first waits.
 */
export async function proxiedLockClient(
  server: TestServer,
  proxy: TcpProxy,
  options?: LockClientOptions,
): Promise<{ locks: LockClient; commandConnection: number }> {
  const before = new Set(proxy.connectionIds);
  // Faults here aim at the command and pub/sub connections; loss detection's own connections
  // (opened when a hold is first watched) would be cut by them too and blur what a test proves.
  // test/primitives/loss-detection.test.ts cuts those on purpose.
  const locks = server.lockClient({ lossDetection: 'renewal', ...options }, { port: proxy.port });
  await locks.getLock('warm-up').isLocked();
  const fresh = proxy.connectionIds.filter((id) => !before.has(id));
  if (fresh.length !== 1) throw new Error(`expected one new connection through the proxy, saw ${fresh.length}`);
  return { locks, commandConnection: fresh[0]! };
}

/** Ids of connections through `proxy` opened since `known` was taken. */
export function newConnections(proxy: TcpProxy, known: readonly number[]): number[] {
  return proxy.connectionIds.filter((id) => !known.includes(id));
}

/** True when `chunk` (bytes a client sent) names `fragment` and is not a (un)subscribe. */
export const carries =
  (fragment: string) =>
  (chunk: Buffer): boolean => {
    const text = chunk.toString('latin1');
    return text.includes(fragment) && !/subscribe/i.test(text);
  };

/**
 * Owner fields of the lock hash of `name` (`<prefix>{name}:lock`, docs/guarantees.md, 4. Keys):
 * field -> hold count. Fields that are no owner (no ":") are left out.
 */
export async function lockOwners(admin: Redis, name: string, prefix = 'latchkey:'): Promise<Map<string, string>> {
  const hash = await admin.hgetall(`${prefix}{${name}}:lock`);
  return new Map(Object.entries(hash).filter(([field]) => field.includes(':')));
}

/** True when some owner of `locks` (client id prefix) holds `name` in Redis now. */
export async function heldInRedisBy(admin: Redis, name: string, locks: LockClient): Promise<boolean> {
  for (const field of (await lockOwners(admin, name)).keys()) if (field.startsWith(`${locks.id}:`)) return true;
  return false;
}

/** Settles like `promise`, or resolves `timedOut` after `ms` (the promise is left running). */
export async function within<T, U>(promise: Promise<T>, ms: number, timedOut: U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a promise settled with, as a value (for asserting on errors without try/catch). */
export function outcome<T>(promise: PromiseLike<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return Promise.resolve(promise).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** A short description of an error or value for assertion messages. */
export function show(value: unknown): string {
  if (value instanceof Error) return `${value.constructor.name}: ${value.message}`;
  return String(value);
}

export { sleep };
