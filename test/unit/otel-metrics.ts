import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { installInMemoryTracing } from './otel.js';

export interface InMemoryMetrics {
  exporter: InMemoryMetricExporter;
  /** Exports what was recorded so far and returns every metric by name (cumulative, all scopes merged). */
  collect(): Promise<Map<string, MetricData>>;
  /** The data points of one metric, after `collect()`. */
  points(name: string): Promise<DataPoint<unknown>[]>;
  uninstall(): Promise<void>;
}

/**
 * Registers a real MeterProvider whose reader exports into memory only when asked
 * (`collect()`): no timer decides what a test sees.
 */
export function installInMemoryMetrics(): InMemoryMetrics {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  const collect = async () => {
    exporter.reset();
    await reader.forceFlush();
    const byName = new Map<string, MetricData>();
    for (const resource of exporter.getMetrics())
      for (const scope of resource.scopeMetrics)
        for (const metric of scope.metrics) {
          // Two scopes may record the same convention's metric (the llm adapters and the chat
          // router both record gen_ai.client.operation.duration): their points are merged.
          const seen = byName.get(metric.descriptor.name);
          if (seen === undefined) byName.set(metric.descriptor.name, metric);
          else
            byName.set(metric.descriptor.name, {
              ...seen,
              dataPoints: [...seen.dataPoints, ...metric.dataPoints],
            } as MetricData);
        }
    return byName;
  };
  return {
    exporter,
    collect,
    async points(name) {
      const metric = (await collect()).get(name);
      return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
    },
    async uninstall() {
      metrics.disable();
      await provider.shutdown();
    },
  };
}

export interface InMemoryTelemetry {
  /** The file's in-memory tracing; its exporter is emptied after each test. */
  readonly tracing: ReturnType<typeof installInMemoryTracing>;
  /** This test's metrics, installed fresh for each test. */
  readonly meters: InMemoryMetrics;
}

/**
 * Registers this file's hooks: in-memory tracing for the whole file, and a fresh in-memory
 * MeterProvider for each test. Read `tracing` and `meters` inside a test.
 */
export function inMemoryTelemetryPerTest(): InMemoryTelemetry {
  let tracing: ReturnType<typeof installInMemoryTracing> | undefined;
  let meters: InMemoryMetrics | undefined;
  beforeAll(() => {
    tracing = installInMemoryTracing();
  });
  beforeEach(() => {
    meters = installInMemoryMetrics();
  });
  afterEach(async () => {
    await meters?.uninstall();
    tracing?.exporter.reset();
  });
  afterAll(() => tracing?.uninstall());
  const installed = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('in-memory telemetry is read only inside a test');
    return value;
  };
  return {
    get tracing() {
      return installed(tracing);
    },
    get meters() {
      return installed(meters);
    },
  };
}
