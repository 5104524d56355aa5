/**
 * Keeps an ioredis Cluster's sharded subscribers on the primaries that serve their channels now.
 * ioredis reads a Cluster's slot map again only when a command is redirected; a primary that a
 * failover demoted unsubscribes its channels (a server-sent SUNSUBSCRIBE, which ioredis reports
 * as an error of that node's subscriber) and would leave every waiter on them deaf until some
 * command happens to be redirected. So on any error of a node's subscriber the map is read again,
 * and again after growing pauses, until ioredis has moved its subscribers (`subscribersReady`,
 * which tells the waiters to look again) or the pauses ran out.
 */

/** The subscriber Cluster, as this module uses it. */
export interface MovableSubscriber {
  on(event: 'nodeError' | 'subscribersReady', listener: () => void): unknown;
  refreshSlotsCache?(callback?: (error?: Error | null) => void): void;
}

/** Pauses between slot-map reads after a subscriber error: the new primary may take a moment to be known. */
const PAUSES_MS = [0, 250, 500, 1_000, 2_000, 4_000];

/** Follows `subscriber`'s moves; returns what stops it (at close). */
export function followSubscriberMoves(subscriber: MovableSubscriber): () => void {
  let timer: NodeJS.Timeout | undefined;
  let step = -1;
  const next = (): void => {
    timer = undefined;
    step++;
    if (step >= PAUSES_MS.length) return void (step = -1);
    timer = setTimeout(() => {
      subscriber.refreshSlotsCache?.(() => undefined);
      next();
    }, PAUSES_MS[step]);
    timer.unref();
  };
  subscriber.on('nodeError', () => {
    if (step === -1) next();
  });
  // Moved: nothing more to read.
  subscriber.on('subscribersReady', () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    step = -1;
  });
  return () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    step = PAUSES_MS.length;
  };
}
