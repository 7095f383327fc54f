// Run: node_modules/.bin/tsx --conditions=@infergate/source examples/observability/src/index.ts
//   TRITON_URLS=host-a:8001,host-b:8001  use real endpoints instead of two embedded reference servers
// The OpenTelemetry SDK starts first, as in a real service; then a few calls go through
// router → cost → batcher → gRPC, and the example prints their trace and the /metrics text.
import { startTestServer, type TestServer } from '@infergate/testing';
import { context, trace } from '@opentelemetry/api';
import { createStack } from './stack.js';
import { startTelemetry } from './telemetry.js';
import { renderTraces } from './trace-tree.js';

const telemetry = await startTelemetry('model-serving-triton-inference-server');

const embedded: TestServer[] = [];
const tritonUrls = process.env.TRITON_URLS?.split(',') ?? [];
if (tritonUrls.length === 0) {
  for (let index = 0; index < 2; index++) {
    const server = await startTestServer({ simulatedGpu: { baseMs: 2, perRowMs: 0.01 } });
    embedded.push(server);
    tritonUrls.push(server.url);
  }
}

const stack = createStack(tritonUrls);
// The service's own span for one unit of work (an HTTP handler would be the parent in a server).
const tracer = trace.getTracer('observability-example');
const request = tracer.startSpan('double vectors');
await context.with(trace.setSpan(context.active(), request), async () => {
  const calls = [1, 2, 3, 4].map((value) =>
    stack.client.infer(
      'simulated_gpu',
      [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: new Float32Array([value, value]) }],
      { tenant: 'acme' },
    ),
  );
  const results = await Promise.all(calls);
  request.setAttribute('app.results', results.length);
});
request.end();

await telemetry.flush();
console.log('--- trace ---');
console.log(renderTraces(telemetry.spans));
console.log('--- /metrics ---');
console.log(await (await fetch(telemetry.metricsUrl)).text());

await stack.close();
await Promise.all(embedded.map((server) => server.stop()));
await telemetry.shutdown();
