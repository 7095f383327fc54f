// Child process of cost-without-otel.test.ts: a fresh process imports the cost package (and core,
// and the reference server) from source, makes a tracker with tracing on (the default) and a Triton
// client over gRPC with the cost interceptor, reserves and settles on the memory store, sends one
// call through the interceptor, and prints whether @opentelemetry/api was loaded after each step.
// One reservation is left held. Then it registers an SDK (spans, metrics), which loads the API (the
// check can see it), reserves and settles again and sends another call, each under a span of its
// own, settles the reservation held from before, and prints the cost attributes those spans got
// and the cost metrics recorded: an SDK registered after the tracker was made is used, and the
// reservation made before it is not counted down on it. The API, imported as ES module or
// required, is loaded from its CommonJS build (its `exports` give Node no ES module), which puts it
// in the require cache.
import { createRequire } from 'node:module';
import { createTritonClient } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { costInterceptor, createCostTracker } from '../index.js';

const requireCache = createRequire(import.meta.url).cache;
const otelLoaded = () =>
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(path));
const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 4], data: [1, 2, 3, 4] }];

const afterImport = otelLoaded();
const server = await startTestServer();
const tracker = createCostTracker({
  budgets: [{ id: 'hourly', scope: ['tenant'], window: 'hour', hardLimitUsd: 1 }],
  builtInPrices: false,
  gpuPrices: [{ usdPerGpuHour: 3.6 }],
});
const client = createTritonClient({
  url: server.url,
  enableGpuIpc: false,
  interceptors: [costInterceptor({ tracker })],
});
const afterConstruct = otelLoaded();
await tracker.settle(await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 }), {
  costUsd: 0.125,
});
const heldAcross = await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 });
await client.infer('identity', inputs, { tenant: 'acme' });
const afterCall = otelLoaded();
// The interceptor charged the call (its GPU time) with nothing registered.
const chargedBefore = (await tracker.spend('hourly', { tenant: 'acme' })).spentUsd > 0.125;

const { installInMemoryTracing } = await import('../../../../test/unit/otel.js');
const { installInMemoryMetrics } = await import('../../../../test/unit/otel-metrics.js');
const tracing = installInMemoryTracing();
const metrics = installInMemoryMetrics();
const afterRegister = otelLoaded();
const { trace } = await import('@opentelemetry/api');
const tracer = trace.getTracer('cost-without-otel');
await tracer.startActiveSpan('reserve and settle', async (span) => {
  await tracker.settle(await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 }), {
    costUsd: 0.25,
  });
  span.end();
});
const heldDuring = await tracker.reserve({ tenant: 'acme', model: 'm', estimateUsd: 0.25 });
const reservationsHeld = (await metrics.points('infergate.cost.reservations'))[0]?.value;
await tracer.startActiveSpan('triton call', async (span) => {
  await client.infer('identity', inputs, { tenant: 'globex' });
  span.end();
});
await tracker.settle(heldAcross, { costUsd: 0.125 });
await tracker.release(heldDuring);
const finished = tracing.exporter.getFinishedSpans();
const costAttributes = Object.fromEntries(
  finished
    .filter((span) => span.name === 'reserve and settle' || span.name === 'triton call')
    .map((span) => [
      span.name,
      { usd: typeof span.attributes['infergate.cost.usd'], tenant: span.attributes['infergate.tenant'] },
    ]),
);
const collected = await metrics.collect();
const spent = (collected.get('infergate.cost.spent')?.dataPoints ?? []).map((point) => ({
  model: point.attributes['gen_ai.request.model'],
  provider: point.attributes['gen_ai.provider.name'],
  positive: (point.value as number) > 0,
}));
const reservationsAfter = collected
  .get('infergate.cost.reservations')
  ?.dataPoints.map((point) => point.value);
const remaining = collected
  .get('infergate.cost.budget.remaining')
  ?.dataPoints.map((point) => point.attributes);
await client.close();
await tracker.close();
await server.stop();
await metrics.uninstall();
tracing.uninstall();
console.log(
  `RESULT ${JSON.stringify({
    afterImport,
    afterConstruct,
    afterCall,
    chargedBefore,
    afterRegister,
    costAttributes,
    rpcSpan: finished.some((span) => span.name === 'inference.GRPCInferenceService/ModelInfer'),
    spent,
    reservationsHeld,
    reservationsAfter,
    remaining,
  })}`,
);
