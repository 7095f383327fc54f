// Child process of pipeline-without-otel.test.ts: a fresh process imports the pipeline package
// (and core, and the reference server) from source, makes a pipeline with tracing on (the default)
// of a Triton step over a gRPC client and a function step after it, runs it once, and prints
// whether @opentelemetry/api was loaded after each step. Then it registers an SDK, which loads the
// API (the check can see it), runs the same pipeline again and prints the spans recorded with their
// parents: an SDK registered after the pipeline was made is used, and each step's context (the RPC
// under its step) still carries. The API, imported as ES module or required, is loaded from its
// CommonJS build (its `exports` give Node no ES module), which puts it in the require cache.
import { createRequire } from 'node:module';
import { createTritonClient } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { createPipeline, functionStep, type Tensor, tritonStep } from './index.js';

const requireCache = createRequire(import.meta.url).cache;
const otelLoaded = () =>
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(path));
const tensor = (values: number[]): Tensor => ({
  datatype: 'FP32',
  shape: [1, values.length],
  data: new Float32Array(values),
});

const afterImport = otelLoaded();
const server = await startTestServer();
const client = createTritonClient({ url: server.url, enableGpuIpc: false });
const pipeline = createPipeline({
  name: 'lazy',
  inputs: { x: { kind: 'tensor', datatype: 'FP32' } },
  steps: {
    echo: {
      step: tritonStep({
        transport: client.grpc,
        model: 'identity',
        inputs: { INPUT0: { datatype: 'FP32' } },
        outputs: { OUTPUT0: { datatype: 'FP32' } },
      }),
      inputs: { INPUT0: 'input.x' },
    },
    sum: {
      step: functionStep({
        inputs: { values: { kind: 'tensor', datatype: 'FP32' } },
        outputs: { total: { kind: 'json' } },
        run: async ({ values }) => ({
          outputs: { total: Array.from((values as Tensor).data as Float32Array).reduce((a, b) => a + b, 0) },
        }),
      }),
      inputs: { values: 'echo.OUTPUT0' },
    },
  },
  outputs: { total: 'sum.total' },
});
const afterConstruct = otelLoaded();
const untraced = await pipeline.run({ x: tensor([1, 2]) });
const afterCall = otelLoaded();

const { installInMemoryTracing } = await import('../../../test/unit/otel.js');
const tracing = installInMemoryTracing();
const afterRegister = otelLoaded();
const traced = await pipeline.run({ x: tensor([3, 4]) });
const finished = tracing.exporter.getFinishedSpans();
const nameOf = (spanId: string | undefined) =>
  finished.find((span) => span.spanContext().spanId === spanId)?.name ?? null;
const spans = finished
  .map((span) => ({ name: span.name, parent: nameOf(span.parentSpanContext?.spanId) }))
  .sort((a, b) => a.name.localeCompare(b.name));
await client.close();
await server.stop();
tracing.uninstall();
console.log(
  `RESULT ${JSON.stringify({
    afterImport,
    afterConstruct,
    afterCall,
    afterRegister,
    totals: [untraced.outputs.total, traced.outputs.total],
    spans,
  })}`,
);
