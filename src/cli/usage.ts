/**
 * The text of `latchkey --help`.
 */
export const USAGE = `latchkey: see and operate latchkey's locks, semaphores and latches on Redis

Usage:
  latchkey inspect [PATTERN] [--json] [--watch [--interval MS]]
  latchkey unlock NAME --force [--kind KIND]
  latchkey run --lock NAME [--wait MS] [--watchdog MS] [--fenced] -- COMMAND [ARG...]
  latchkey demo [--workers N] [--products N] [--stock N] [--seconds N] [--no-lock]
  latchkey --help | --version

Commands:
  inspect  Every primitive whose name matches PATTERN (a Redis glob, default *), decoded:
           locks with owner, hold count, TTL and queued waiters; read-write locks with writer
           and readers; semaphores with free permits, holders and waiters; latch counts.
           Reads every primary of a Cluster with SCAN. --json prints one JSON document
           (with --watch, one per line); --watch redraws every --interval ms (default 1000).
  unlock   Releases NAME whoever holds it (--force is required). A lock of any kind is
           deleted and handed to its next queued waiter; a read-write lock loses its writer
           and readers; a permit-expirable semaphore gets every permit back; a count-down
           latch is opened. A semaphore's permits have no owners and are left alone.
           --kind lock|read-write-lock|semaphore|permit-expirable-semaphore|count-down-latch
           limits it to one kind.
  run      Takes the lock NAME, runs COMMAND while the watchdog renews it, passes SIGINT,
           SIGTERM and SIGHUP on, and releases it when COMMAND exits. If the lock is lost,
           COMMAND gets SIGTERM (SIGKILL --kill-after ms later, default 5000). --wait MS
           gives up after MS (default: wait as long as it takes); --watchdog MS sets the
           lease the watchdog renews (default 30000: a crashed run frees the lock within
           it); --fenced takes a FencedLock. COMMAND sees LATCHKEY_LOCK, and with --fenced
           LATCHKEY_FENCING_TOKEN.
  demo     Worker processes buy products under per-product locks, with live progress and a
           summary that proves no overlap; --no-lock runs the same without the lock, to show
           what it prevents. Uses REDIS_URL if set (only keys under a random namespace,
           removed afterwards), else starts a private redis-server.

Connection (inspect, unlock, run):
  --url URL           redis://[user:password@]host[:port][/db], or rediss:// for TLS; any node
                      of a Cluster finds the whole Cluster (default: $REDIS_URL)
  --sentinel H:P,...  ask these Sentinels for the master named by --name instead
  --prefix PREFIX     the keyPrefix your LockClient uses (default: latchkey:)
  --timeout MS        bound on connecting and on each command (default: 5000)

Exit status:
  0 done; 1 nothing was held (unlock); 2 bad arguments; 3 bad URL; 4 Redis unreachable;
  run: the command's own status (128+N if it died of signal N), 5 lock busy past --wait,
  6 lock lost and command stopped, 127 command not found.
`;
