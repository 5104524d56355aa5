import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { instrumentLatchkey } from '../src/otel.js';
import { sleep } from '../harness/eventually.js';
import { startServer, type TestServer } from '../harness/server.js';

let server: TestServer;
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

before(async () => {
  server = await startServer();
});
after(async () => {
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

/** Every data point of the metric `name` from a fresh collection. */
async function points<T = number>(name: string): Promise<DataPoint<T>[]> {
  exporter.reset();
  await reader.forceFlush();
  const metric = exporter
    .getMetrics()
    .flatMap((resource) => resource.scopeMetrics)
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<T>[];
}
const total = (list: DataPoint<number>[]): number => list.reduce((sum, point) => sum + point.value, 0);

/** Every instrument latchkey/otel makes, with its unit. */
const INSTRUMENTS: Record<string, string> = {
  'latchkey.lock.wait.duration': 's',
  'latchkey.lock.hold.duration': 's',
  'latchkey.lock.acquisitions': '{acquisition}',
  'latchkey.lock.timeouts': '{wait}',
  'latchkey.lock.lost': '{lock}',
  'latchkey.lock.renewals': '{renewal}',
  'latchkey.lock.waiters': '{waiter}',
};

describe('latchkey/otel from a real run', () => {
  it('describes every instrument and gives its unit', async () => {
    // A provider of its own: the other tests count exactly what they record.
    const ownExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const ownReader = new PeriodicExportingMetricReader({ exporter: ownExporter, exportIntervalMillis: 3_600_000 });
    const ownProvider = new MeterProvider({ readers: [ownReader] });
    const instrumentation = instrumentLatchkey({ meterProvider: ownProvider });
    // Every instrument gets a point: an acquisition held past a renewal, a wait that times out, a loss.
    const locks = server.lockClient({ watchdogTimeout: 300 });
    const lease = await locks.getLock('described').acquire();
    assert.equal(await locks.getLock('described').tryLock({ waitTime: 250 }), false);
    await lease.release();
    const lost = await locks.getLock('described').acquire();
    const aborted = new Promise((resolve) => lost.signal.addEventListener('abort', resolve, { once: true }));
    await server.client().del('latchkey:{described}:lock');
    await aborted;
    await ownReader.forceFlush();
    const descriptors = ownExporter
      .getMetrics()
      .flatMap((resource) => resource.scopeMetrics)
      .flatMap((scope) => scope.metrics)
      .map((metric) => metric.descriptor);
    for (const [name, unit] of Object.entries(INSTRUMENTS)) {
      const descriptor = descriptors.find((d) => d.name === name);
      assert.ok(descriptor, `${name} reported`);
      assert.equal(descriptor.unit, unit, name);
      assert.ok(descriptor.description.length > 10, `${name} has a description`);
    }
    instrumentation.disable();
    await ownProvider.shutdown();
  });

  it('records wait and hold histograms, acquisitions, timeouts, lost leases, waiters and wait spans', async () => {
    const instrumentation = instrumentLatchkey({ meterProvider, tracerProvider, spans: true });
    // A 3 s lease: a loaded machine's slow renewals must not lose the contended holds.
    const locks = server.lockClient({ watchdogTimeout: 3_000 });
    const other = server.lockClient({ watchdogTimeout: 3_000 });

    // A contended lock: the waiter waits about 150 ms; the holder held it about as long.
    const holder = await locks.getLock('orders').acquire();
    const waiting = other.getLock('orders').acquire();
    await sleep(150);
    assert.equal(total(await points('latchkey.lock.waiters')), 1, 'one caller waiting now');
    await holder.release();
    const second = await waiting;
    // A wait that times out.
    assert.equal(await locks.getLock('orders').tryLock({ waitTime: 50 }), false);
    await second.release();

    // A lost lease: someone deletes the lock; Redis tells the holder (or the next renewal, within 1 s, finds it gone).
    const lease = await locks.getLock('fragile').acquire();
    const lostNow = new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
    assert.equal(await other.getLock('fragile').forceUnlock(), true);
    await lostNow;

    const waits = await points<Histogram>('latchkey.lock.wait.duration');
    const byOutcome = new Map(waits.map((p) => [p.attributes['latchkey.lock.outcome'], p.value]));
    assert.equal(byOutcome.get('acquired')?.count, 1);
    assert.ok(byOutcome.get('acquired')!.sum! >= 0.1 && byOutcome.get('acquired')!.sum! < 10, 'seconds, about 0.15');
    assert.equal(byOutcome.get('timeout')?.count, 1);
    assert.equal(waits[0]!.attributes['latchkey.lock.kind'], 'lock');

    const holds = await points<Histogram>('latchkey.lock.hold.duration');
    const held = holds.reduce((sum, p) => sum + p.value.count, 0);
    assert.equal(held, 2, 'two holds released (the lost one is counted as lost)');
    assert.ok(holds[0]!.value.max! >= 0.1, "the first holder's 150 ms");

    assert.equal(total(await points('latchkey.lock.lost')), 1);
    assert.equal(total(await points('latchkey.lock.timeouts')), 1);
    assert.equal(total(await points('latchkey.lock.acquisitions')), 3);
    assert.equal(total(await points('latchkey.lock.waiters')), 0, 'every wait ended');

    const waitSpans = spans.getFinishedSpans().filter((span) => span.name === 'latchkey wait');
    assert.equal(waitSpans.length, 2);
    const acquiredSpan = waitSpans.find((span) => span.attributes['latchkey.lock.outcome'] === 'acquired')!;
    const ms = acquiredSpan.duration[0] * 1_000 + acquiredSpan.duration[1] / 1e6;
    assert.ok(ms >= 100 && ms < 10_000, `span of ${ms} ms`);

    instrumentation.disable();
    await locks.getLock('after').withLock(() => undefined);
    assert.equal(total(await points('latchkey.lock.acquisitions')), 3, 'nothing recorded once disabled');
  });

  it('labels measurements with a bounded group of the lock name only when asked', async () => {
    const instrumentation = instrumentLatchkey({ meterProvider, nameAttribute: (name) => name.split(':')[0] });
    try {
      await server
        .lockClient()
        .getLock('invoice:7')
        .withLock(() => undefined);
      const acquisitions = await points('latchkey.lock.acquisitions');
      assert.ok(acquisitions.some((p) => p.attributes['latchkey.lock.name'] === 'invoice'));
    } finally {
      instrumentation.disable();
    }
  });
});
