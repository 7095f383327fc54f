import { createMicroBatcher } from '@infergate/batcher';
import { applyInterceptors, createGrpcTransport, createTritonClient } from '@infergate/core';
import { costInterceptor, createCostTracker } from '@infergate/cost';
import { createInferRouter } from '@infergate/router';
import { metrics, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { summarizeLatencies } from '../../packages/cli/src/perf/latency-summary.js';
import { closedLoopWindow, type WindowSample } from '../../packages/cli/src/perf/load-window.js';
import { type BenchCase, flag, median, packageVersion, report, round } from '../lib.js';
import { startServerProcess } from '../server-process.js';

/** The stack a service builds: router → cost (GPU time) → micro-batcher → gRPC, `tracing` in every layer. */
function createStack(url: string, tracing: boolean) {
  const tracker = createCostTracker({ tracing, gpuPrices: [{ model: 'identity', usdPerGpuHour: 2.5 }] });
  const grpc = createGrpcTransport({ url, tracing, enableGpuIpc: false });
  const batcher = createMicroBatcher(grpc, { tracing, models: { identity: { maxBatchSize: 64 } } });
  const router = createInferRouter({
    tracing,
    targets: [{ name: 'reference', transport: applyInterceptors(batcher, [costInterceptor({ tracker })]) }],
  });
  const client = createTritonClient({ transport: router });
  const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16) }];
  return {
    call: () => client.infer('identity', inputs, { tenant: 'bench' }),
    async close() {
      await client.close();
      await router.close();
      await batcher.close();
      await grpc.close();
      await tracker.close();
    },
  };
}

/** An exporter that drops everything: the SDK does all its work, nothing leaves the process. */
class DropExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

class IdleReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

type Stack = ReturnType<typeof createStack>;

/**
 * Interleaved windows of two arms, the order flipped each round. Per round: on's CPU per call ÷
 * off's − 1, and off's items/s ÷ on's − 1; each result is the median over rounds (a round's two
 * windows share the machine's weather).
 */
async function compare(
  arms: { on: Stack; off: Stack },
  labels: { on: string; off: string },
  concurrency: number,
  rounds: number,
  windowMs: number,
  cases: BenchCase[],
): Promise<{ cpuSlower: number; throughputSlower: number }> {
  for (const stack of [arms.on, arms.off]) await closedLoopWindow(stack.call, concurrency, 1_000); // warm-up
  const samples = { on: [] as WindowSample[], off: [] as WindowSample[] };
  const cpuRounds: number[] = [];
  const rateRounds: number[] = [];
  for (let index = 0; index < rounds; index++) {
    const order = index % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    const rate: Record<string, number> = {};
    const cpu: Record<string, number> = {};
    for (const arm of order) {
      const sample = await closedLoopWindow(arms[arm].call, concurrency, windowMs);
      if (sample.errors > 0)
        throw new Error(`${labels[arm]}: ${sample.errors} errors (${sample.firstError})`);
      samples[arm].push(sample);
      rate[arm] = (sample.completed * 1000) / sample.elapsedMs;
      cpu[arm] = sample.cpuMs / sample.completed;
    }
    cpuRounds.push((cpu.on as number) / (cpu.off as number) - 1);
    rateRounds.push((rate.off as number) / (rate.on as number) - 1);
  }
  const cpuPerCall: Record<string, number> = {};
  for (const arm of ['on', 'off'] as const) {
    const rates = samples[arm].map((sample) => (sample.completed * 1000) / sample.elapsedMs);
    const latency = summarizeLatencies(samples[arm].flatMap((sample) => sample.latencies));
    cpuPerCall[arm] = median(samples[arm].map((sample) => sample.cpuMs / sample.completed));
    cases.push({
      name: `${labels[arm]} c${concurrency}`,
      arm: labels[arm],
      load: `c${concurrency}`,
      itemsPerSec: median(rates),
      p50Ms: latency.p50Ms,
      p99Ms: latency.p99Ms,
      extra: {
        cpuMsPerCall: round(cpuPerCall[arm] as number, 4),
        perWindowItemsPerSec: rates.map((r) => round(r, 1)),
      },
    });
  }
  return { cpuSlower: median(cpuRounds), throughputSlower: median(rateRounds) };
}

export async function run(): Promise<void> {
  const windowMs = Number(flag('seconds') ?? 0.75) * 1000;
  const rounds = Number(flag('rounds') ?? 30);
  const server = await startServerProcess();
  const cases: BenchCase[] = [];
  const ratios: Record<string, number> = {};
  try {
    // 1. No SDK registered: the API's no-ops, as a service that does not export telemetry runs us.
    const off = createStack(server.url, false);
    const on = createStack(server.url, true);
    const labels = { on: 'tracing on, no SDK', off: 'tracing off' };
    const c1 = await compare({ on, off }, labels, 1, rounds, windowMs, cases);
    ratios.noop_tracing_overhead = c1.cpuSlower;
    ratios.noop_tracing_throughput_c1 = c1.throughputSlower;
    const c16 = await compare({ on, off }, labels, 16, Math.ceil(rounds / 2), windowMs, cases);
    ratios.noop_tracing_overhead_c16 = c16.cpuSlower;
    ratios.noop_tracing_throughput_c16 = c16.throughputSlower;

    // 2. For information: an SDK registered, spans batched to an exporter that drops them, metrics
    //    aggregated by a reader nobody reads. `off` records nothing either way.
    const tracerProvider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new DropExporter())],
    });
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new IdleReader()] }));
    const sdk = await compare(
      { on, off },
      { on: 'tracing on, SDK + dropping exporter', off: 'tracing off (SDK registered)' },
      1,
      Math.ceil(rounds / 2),
      windowMs,
      cases,
    );
    ratios.sdk_tracing_overhead = sdk.cpuSlower;
    ratios.sdk_tracing_throughput_c1 = sdk.throughputSlower;
    await on.close();
    await off.close();
    await tracerProvider.shutdown();
    trace.disable();
    metrics.disable();
  } finally {
    server.child.kill('SIGTERM');
  }
  report({
    suite: 'tracing',
    versions: {
      '@infergate/core': packageVersion('core'),
      '@infergate/batcher': packageVersion('batcher'),
      '@infergate/router': packageVersion('router'),
      '@infergate/cost': packageVersion('cost'),
    },
    cases,
    ratios,
    targets: {
      noop_tracing_overhead: '<= 0.03 (client CPU per call, c1)',
      noop_tracing_throughput_c1: 'report',
      noop_tracing_overhead_c16: 'report',
      noop_tracing_throughput_c16: 'report',
      sdk_tracing_overhead: 'report',
      sdk_tracing_throughput_c1: 'report',
    },
    command: `pnpm bench tracing --seconds ${windowMs / 1000} --rounds ${rounds}`,
  });
}
