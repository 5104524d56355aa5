/**
 * Scenarios reply-lost, client-kill and reply-timeout (commands Redis ran whose replies never
 * arrived, or came too late) and waits-aborted (waits given up while their attempt is in flight).
 */
import type { Redis } from 'ioredis';
import type { Style } from '../protocol.js';
import { resource } from './common.js';
import { freezeServers, repeat } from './inject.js';
import { STRICT, type FaultContext, type Scenario } from './types.js';

/** Re-entry (scope, nested withLock) shows a hold counted twice or released twice; the others the plain paths. */
const REENTRANT: readonly Style[] = ['scope', 'nested', 'withLock', 'acquire'];

/** A script call as it goes on the wire: `EVALSHA` or `EVAL` as a RESP bulk string. */
const SCRIPT_CALL = /\$(4|7)\r\neval(sha)?\r\n/i;

/**
 * The proxy forwards a script call, swallows Redis' reply and cuts the connection: Redis ran it,
 * the client never heard, and ioredis sends it again after reconnecting (its default). Every
 * script must give the first run's outcome on a repeat: hold counts, permits and releases stay
 * right (docs/guarantees.md, 3.2 Retries are harmless).
 */
async function dropReplies(ctx: FaultContext): Promise<void> {
  await repeat(ctx, 200, 200, async () => {
    const worker = ctx.rng.int(0, ctx.fleet.workers.length - 1);
    const proxy = ctx.env.proxy(worker);
    const dropped = proxy.dropNextReply((chunk) => SCRIPT_CALL.test(chunk.toString('latin1')));
    ctx.fault({ kind: 'reply-dropped', phase: 'instant', losesLocks: false, scope: { worker } });
    await Promise.race([dropped, ctx.sleep(2_500)]);
    await ctx.sleep(ctx.rng.int(50, 200));
  });
}

/**
 * `CLIENT KILL TYPE normal` queued behind the workers' commands, so Redis runs those commands and
 * then drops their connections before the replies go out: on a SIGSTOPped server (everything
 * queues in the sockets) or behind `CLIENT PAUSE ALL` (everything queues in Redis). A third
 * variant kills the pub/sub connections: subscriptions must come back, waiters must not strand.
 */
async function killClients(ctx: FaultContext): Promise<void> {
  const server = ctx.env.servers[0];
  if (!server) return;
  const { admin, process } = server;
  const kill = (type: string): Promise<unknown> => admin.call('client', 'kill', 'type', type);
  let round = 0;
  await repeat(ctx, 200, 300, async () => {
    const how = (['sigstop', 'pause', 'pubsub'] as const)[round++ % 3] ?? 'sigstop';
    ctx.fault({ kind: `client-kill-${how}`, phase: 'instant', losesLocks: false });
    if (how === 'sigstop') {
      process.freeze();
      await ctx.sleep(30);
      const killed = kill('normal');
      await ctx.sleep(10);
      process.resume();
      await killed;
    } else if (how === 'pause') {
      await admin.call('client', 'pause', '60', 'ALL');
      await ctx.sleep(30);
      await kill('normal');
    } else await kill('pubsub');
    await ctx.sleep(ctx.rng.int(100, 300));
  });
}

function replyLoss(
  name: string,
  title: string,
  proxied: boolean,
  quick: boolean,
  faults: (ctx: FaultContext) => Promise<void>,
): Scenario {
  return {
    name,
    title,
    quick,
    servers: 1,
    proxied,
    workers: 4,
    client: { watchdogTimeout: 1_500 },
    resources: [resource('lock', { tasks: 4, styles: REENTRANT }), resource('semaphore')],
    durationMs: { quick: 4_000, full: 14_000 },
    expect: { ...STRICT, recovers: true },
    faults,
  };
}

/**
 * `CLIENT PAUSE` longer than the client's commandTimeout (250 ms): calls fail with
 * RedisUnavailableError while Redis still runs them later. Each uncertain outcome must end known:
 * no overlap, no lock held forever, nothing left without a TTL. (A semaphore's permits cannot be
 * accounted for after a release that failed, so only locks here.)
 */
const replyTimeout: Scenario = {
  name: 'reply-timeout',
  title: 'Lock: CLIENT PAUSE 700 ms, longer than commandTimeout 250 ms (calls fail, Redis runs them later)',
  quick: false,
  servers: 1,
  proxied: false,
  workers: 4,
  client: { watchdogTimeout: 1_500, commandTimeout: 250 },
  resources: [resource('lock', { tasks: 4, styles: REENTRANT })],
  durationMs: { quick: 4_000, full: 14_000 },
  expect: {
    ...STRICT,
    lossSignals: 'exposed',
    allowedErrors: ['RedisUnavailableError', 'LockAcquireTimeoutError'],
    everyTaskEnters: false,
    recovers: true,
  },
  faults: (ctx) =>
    repeat(ctx, 300, 700, async () => {
      const admin: Redis | undefined = ctx.env.servers[0]?.admin;
      ctx.fault({ kind: 'client-pause', phase: 'start', losesLocks: true, detail: 'CLIENT PAUSE 700 ALL' });
      await admin?.call('client', 'pause', '700', 'ALL');
      await ctx.sleep(700);
      ctx.fault({ kind: 'client-pause', phase: 'end', losesLocks: true });
      await ctx.sleep(ctx.rng.int(600, 900));
    }),
};

/**
 * Callers that give up: three waits in four are aborted 5-60 ms after they start, while
 * redis-server is SIGSTOPped for 30-150 ms now and then, so many aborts land while an attempt is
 * in flight. The caller hears the abort at once; what that attempt wins (a lock, a fenced lock
 * after both its calls, a permit) is given back once its reply comes: no overlap, nothing left
 * held, no permit lost or duplicated. The fourth wait stays until it gets in, and every task must
 * get in: a wait that gave up leaves nothing in the way of those that stay. (With every wait
 * aborted, a task got in only when the lock came round within its 5-60 ms, about one wait in 20
 * for the FencedLock; on a loaded machine a task now and then never did.)
 */
const waitsAborted: Scenario = {
  name: 'waits-aborted',
  title:
    'Lock, FencedLock, Semaphore(2): three waits in four aborted 5-60 ms in, Redis SIGSTOPped 30-150 ms now and then',
  quick: true,
  servers: 1,
  proxied: false,
  workers: 4,
  client: { watchdogTimeout: 1_500 },
  resources: [
    resource('lock', { styles: ['withLock', 'acquire', 'lock'], abortWaitMs: [5, 60], abortShare: 0.75 }),
    resource('fenced-lock', { abortWaitMs: [5, 60], abortShare: 0.75 }),
    resource('semaphore', { styles: ['permit'], abortWaitMs: [5, 60], abortShare: 0.75 }),
  ],
  durationMs: { quick: 4_000, full: 14_000 },
  expect: { ...STRICT, recovers: true },
  faults: (ctx) =>
    repeat(ctx, 300, 150, async () => {
      await freezeServers(ctx, ctx.env.servers, ctx.rng.int(30, 150), 'none');
      await ctx.sleep(ctx.rng.int(100, 300));
    }),
};

export const replyFaultScenarios: readonly Scenario[] = [
  replyLoss(
    'reply-lost',
    'Lock (re-entrant) + Semaphore(2): the proxy drops a script reply after Redis ran it',
    true,
    true,
    dropReplies,
  ),
  replyLoss(
    'client-kill',
    'Lock (re-entrant) + Semaphore(2): CLIENT KILL queued behind commands (SIGSTOP, CLIENT PAUSE), pub/sub killed',
    false,
    true,
    killClients,
  ),
  replyTimeout,
  waitsAborted,
];
