// latchkey's OpenTelemetry metrics. In production, give the MeterProvider your exporter
// (OTLP, Prometheus...); here an in-memory one, printed at the end.
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { Redis } from 'ioredis';
import { LockClient } from 'latchkey';
import { instrumentLatchkey } from 'latchkey/otel';

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
const instrumentation = instrumentLatchkey(); // uses the global MeterProvider

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const locks = new LockClient(redis);

// Three tasks contend for one lock, each holding it for 20 ms: two of them wait.
const holdFor20ms = (): Promise<void> =>
  locks.getLock('report').withLock(() => new Promise((resolve) => setTimeout(resolve, 20)));
await Promise.all([holdFor20ms(), holdFor20ms(), holdFor20ms()]);
// And one gives up: it waits at most 50 ms for a lock held longer.
const lease = await locks.getLock('report').acquire();
await locks.getLock('report').tryLock({ waitTime: 50 });
await lease.release();

await reader.forceFlush();
for (const metric of exporter
  .getMetrics()
  .flatMap((r) => r.scopeMetrics)
  .flatMap((s) => s.metrics)) {
  for (const point of metric.dataPoints) {
    const labels = Object.entries(point.attributes).map(
      ([key, value]) => `${key.replace('latchkey.lock.', '')}=${String(value)}`,
    );
    const value = point.value as number | { count: number; sum?: number };
    const shown = typeof value === 'number' ? String(value) : `count ${value.count}, sum ${value.sum?.toFixed(3)} s`;
    console.log(`${metric.descriptor.name} {${labels.join(', ')}} ${shown}`);
  }
}

instrumentation.disable();
await locks.shutdown();
redis.disconnect();
