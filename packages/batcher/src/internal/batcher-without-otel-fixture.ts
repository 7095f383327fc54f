// Child process of batcher-without-otel.test.ts: a fresh process imports the batcher (and core, and
// the reference server) from source, makes a batcher with tracing on (the default) over a gRPC
// client, sends one call, and prints whether @opentelemetry/api was loaded after each step. Then
// it registers an SDK (spans and metrics), which loads the API (the check can see it), sends one
// more call through the same batcher, and prints the batch spans and batch-size points recorded:
// an SDK registered after the batcher was made is used. The API, imported as ES module or
// required, is loaded from its CommonJS build (its `exports` give Node no ES module), which puts it
// in the require cache.
import { createRequire } from 'node:module';
import { createTritonClient } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { createMicroBatcher } from '../index.js';
import { fp32, requestOf } from './testing/echo-transport.js';

const requireCache = createRequire(import.meta.url).cache;
const otelLoaded = () =>
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(path));

const afterImport = otelLoaded();
const server = await startTestServer();
const client = createTritonClient({ url: server.url, enableGpuIpc: false });
const batcher = createMicroBatcher(client.grpc, { maxBatchSize: 8, maxQueueDelayMs: 1 });
const afterConstruct = otelLoaded();
await batcher.infer(requestOf('identity', fp32('INPUT0', 1, 4, 1)));
const afterCall = otelLoaded();

const { installInMemoryTracing } = await import('../../../../test/unit/otel.js');
const { installInMemoryMetrics } = await import('../../../../test/unit/otel-metrics.js');
const tracing = installInMemoryTracing();
const metrics = installInMemoryMetrics();
const afterRegister = otelLoaded();
await batcher.infer(requestOf('identity', fp32('INPUT0', 2, 4, 2)));
const spans = tracing.exporter.getFinishedSpans().map((span) => span.name);
const batchRows = (await metrics.points('infergate.batcher.batch.size')).map(
  (point) => (point.value as { sum: number }).sum,
);
await batcher.close();
await client.close();
await server.stop();
await metrics.uninstall();
tracing.uninstall();
console.log(
  `RESULT ${JSON.stringify({ afterImport, afterConstruct, afterCall, afterRegister, spans, batchRows })}`,
);
