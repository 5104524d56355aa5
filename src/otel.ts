/**
 * `latchkey/otel`: OpenTelemetry metrics (and optional spans) from latchkey's diagnostics
 * channels. `@opentelemetry/api` is an optional peer dependency, imported only here: the main
 * entry never loads it.
 *
 * @example
 * ```ts
 * import { instrumentLatchkey } from 'latchkey/otel';
 * const instrumentation = instrumentLatchkey(); // the global MeterProvider, as set up by your SDK
 * // ... on shutdown:
 * instrumentation.disable();
 * ```
 * @module
 */
import {
  metrics,
  SpanStatusCode,
  trace,
  type Attributes,
  type MeterProvider,
  type TracerProvider,
} from '@opentelemetry/api';
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { channels } from './diagnostics.js';

/** Options of {@link instrumentLatchkey}. */
export interface LatchkeyInstrumentationOptions {
  /** Where the instruments are created. @default the global `MeterProvider` (`metrics.getMeterProvider()`) */
  readonly meterProvider?: MeterProvider;
  /** Where wait spans go, when `spans` is on. @default the global `TracerProvider` */
  readonly tracerProvider?: TracerProvider;
  /**
   * Record a span for every wait (`latchkey wait`, from the failed first attempt to the outcome),
   * as a child of the context active when the wait started. Spans are recorded when a wait ends.
   * @default false
   */
  readonly spans?: boolean;
  /**
   * Adds `latchkey.lock.name` to every measurement: map a lock name to a value of bounded
   * cardinality (`(name) => name.split(':')[0]`), or to undefined to leave it out. Lock names
   * themselves (`order:42`) are usually unbounded, so names are left out by default.
   * @default undefined
   */
  readonly nameAttribute?: (name: string) => string | undefined;
}

/** A running instrumentation; `disable()` unsubscribes it from every channel. */
export interface LatchkeyInstrumentation {
  /** Stops recording: unsubscribes from every channel. Idempotent. */
  disable(): void;
}

/** The shape of the channels' messages; every field is optional here, for older and newer engines. */
interface Message {
  readonly name?: string;
  readonly kind?: string;
  readonly key?: string;
  readonly owner?: string;
  readonly holds?: number;
  readonly held?: number;
  readonly waited?: number;
  readonly phase?: 'start' | 'end';
  readonly acquired?: boolean;
  readonly outcome?: 'acquired' | 'timeout' | 'aborted' | 'error';
}

const WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const HOLD_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/** Bound on remembered acquisitions whose release we have not seen (a client shut down while holding). */
const MAX_TRACKED = 100_000;

/**
 * Turns latchkey's diagnostics channels into OpenTelemetry instruments (meter `latchkey`):
 * - `latchkey.lock.wait.duration` (histogram, s; `latchkey.lock.kind`, `latchkey.lock.outcome`):
 *   how long callers waited after a failed first attempt (an uncontended acquisition never waits);
 * - `latchkey.lock.hold.duration` (histogram, s; kind): from acquisition to the last release;
 * - `latchkey.lock.acquisitions` (counter, `{acquisition}`; kind, `latchkey.lock.reentrant`);
 * - `latchkey.lock.timeouts` (counter, `{wait}`; kind): waits that ended at their `waitTime`;
 * - `latchkey.lock.lost` (counter, `{lock}`; kind): held locks found lost (the lease signal aborted);
 * - `latchkey.lock.renewals` (counter, `{renewal}`; kind): locks renewed by the watchdog;
 * - `latchkey.lock.waiters` (up-down counter, `{waiter}`; kind): callers waiting right now.
 * Call it once per process; each call subscribes again.
 */
export function instrumentLatchkey(options: LatchkeyInstrumentationOptions = {}): LatchkeyInstrumentation {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter('latchkey');
  const tracer = options.spans
    ? (options.tracerProvider ?? trace.getTracerProvider()).getTracer('latchkey')
    : undefined;
  const waitDuration = meter.createHistogram('latchkey.lock.wait.duration', {
    unit: 's',
    description: 'Time a caller waited for a lock, semaphore or latch after its first attempt failed',
    advice: { explicitBucketBoundaries: WAIT_BUCKETS },
  });
  const holdDuration = meter.createHistogram('latchkey.lock.hold.duration', {
    unit: 's',
    description: 'Time a lock was held, from its acquisition to its last release',
    advice: { explicitBucketBoundaries: HOLD_BUCKETS },
  });
  const acquisitions = meter.createCounter('latchkey.lock.acquisitions', {
    unit: '{acquisition}',
    description: 'Acquisitions of a lock, semaphore permit or latch wait, re-entries included',
  });
  const timeouts = meter.createCounter('latchkey.lock.timeouts', {
    unit: '{wait}',
    description: 'Waits that ended at their waitTime without acquiring',
  });
  const lost = meter.createCounter('latchkey.lock.lost', {
    unit: '{lock}',
    description: 'Held locks found lost (deleted, taken over or expired): their lease signal aborted',
  });
  const renewals = meter.createCounter('latchkey.lock.renewals', {
    unit: '{renewal}',
    description: 'Locks whose lease the watchdog renewed',
  });
  const waiters = meter.createUpDownCounter('latchkey.lock.waiters', {
    unit: '{waiter}',
    description: 'Callers waiting for a lock, semaphore or latch right now',
  });
  // When the engine leaves `held` out of a release, hold time comes from the acquisition's time.
  const heldSince = new Map<string, number>();

  const attributes = (message: Message): Attributes => {
    const group = message.name === undefined ? undefined : options.nameAttribute?.(message.name);
    return {
      'latchkey.lock.kind': message.kind ?? 'lock',
      ...(group === undefined ? {} : { 'latchkey.lock.name': group }),
    };
  };
  const holdKey = (message: Message): string => `${message.key ?? message.name}\0${message.owner}`;

  const handlers: [diagnosticsChannel.Channel, (message: Message) => void][] = [
    [
      channels.wait,
      (message) => {
        const attrs = attributes(message);
        if (message.phase === 'start') return waiters.add(1, attrs);
        waiters.add(-1, attrs);
        const outcome = message.outcome ?? (message.acquired ? 'acquired' : 'timeout');
        const waited = message.waited ?? 0;
        waitDuration.record(waited / 1_000, { ...attrs, 'latchkey.lock.outcome': outcome });
        if (outcome === 'timeout') timeouts.add(1, attrs);
        if (tracer) {
          const now = Date.now();
          const span = tracer.startSpan('latchkey wait', {
            startTime: now - waited,
            attributes: { ...attrs, 'latchkey.lock.outcome': outcome },
          });
          if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
          span.end(now);
        }
      },
    ],
    [
      channels.acquire,
      (message) => {
        const reentrant = (message.holds ?? 1) > 1;
        acquisitions.add(1, { ...attributes(message), 'latchkey.lock.reentrant': reentrant });
        if (reentrant) return;
        if (heldSince.size >= MAX_TRACKED) heldSince.delete(heldSince.keys().next().value!);
        heldSince.set(holdKey(message), performance.now());
      },
    ],
    [
      channels.release,
      (message) => {
        if ((message.holds ?? 0) > 0) return;
        const key = holdKey(message);
        const since = heldSince.get(key);
        heldSince.delete(key);
        const held = message.held ?? (since === undefined ? undefined : performance.now() - since);
        if (held !== undefined) holdDuration.record(held / 1_000, attributes(message));
      },
    ],
    [
      channels.lost,
      (message) => {
        heldSince.delete(holdKey(message));
        lost.add(1, attributes(message));
      },
    ],
    [channels.renew, (message) => renewals.add(1, attributes(message))],
  ];
  const subscribed = handlers.map(([channel, handle]) => {
    const listener = (message: unknown): void => handle(message as Message);
    channel.subscribe(listener);
    return () => channel.unsubscribe(listener);
  });
  return {
    disable() {
      for (const unsubscribe of subscribed.splice(0)) unsubscribe();
      heldSince.clear();
    },
  };
}
