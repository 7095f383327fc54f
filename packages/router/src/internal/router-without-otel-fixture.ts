// Child process of router-without-otel.test.ts: a fresh process imports the router (and core, and
// the reference server) from source, makes an infer router with tracing on (the default) over a
// gRPC client, sends one call, and prints whether @opentelemetry/api was loaded after each step.
// Then it registers an SDK (spans and metrics), which loads the API (the check can see it), sends
// one more call through the same router, and prints the spans and attempt counts recorded: an SDK
// registered after the router was made is used. The API, imported as ES module or required, is
// loaded from its CommonJS build (its `exports` give Node no ES module), which puts it in the
// require cache.
import { createRequire } from 'node:module';
import { createTritonClient } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { createInferRouter } from '../index.js';

const requireCache = createRequire(import.meta.url).cache;
const otelLoaded = () =>
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(path));
const request = (seed: number) => ({
  model: 'identity',
  inputs: [
    {
      name: 'INPUT0',
      datatype: 'FP32' as const,
      shape: [1],
      raw: new Uint8Array(new Float32Array([seed]).buffer),
    },
  ],
});

const afterImport = otelLoaded();
const server = await startTestServer();
const client = createTritonClient({ url: server.url, enableGpuIpc: false });
const router = createInferRouter({
  name: 'triton',
  targets: [
    { name: 'a', transport: client.grpc },
    { name: 'b', transport: client.grpc, breaker: { openMs: 500 } },
  ],
  route: { fallback: ['a', 'b'] },
  attemptTimeoutMs: 5000,
});
const afterConstruct = otelLoaded();
await router.infer(request(1));
const afterCall = otelLoaded();

const { installInMemoryTracing } = await import('../../../../test/unit/otel.js');
const { installInMemoryMetrics } = await import('../../../../test/unit/otel-metrics.js');
const tracing = installInMemoryTracing();
const metrics = installInMemoryMetrics();
const afterRegister = otelLoaded();
await router.infer(request(2));
const spans = tracing.exporter.getFinishedSpans().map((span) => span.name);
const attempts = (await metrics.points('infergate.router.attempts')).map((point) => ({
  target: point.attributes['infergate.target'],
  outcome: point.attributes['infergate.outcome'],
  value: point.value,
}));
await router.close();
await client.close();
await server.stop();
await metrics.uninstall();
tracing.uninstall();
console.log(
  `RESULT ${JSON.stringify({ afterImport, afterConstruct, afterCall, afterRegister, spans, attempts })}`,
);
