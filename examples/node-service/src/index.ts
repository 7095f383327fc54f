// Run: node_modules/.bin/tsx --conditions=source examples/node-service/src/index.ts
//   TRITON_URLS=host-a:8001,host-b:8001  use real replicas instead of two embedded reference servers
//   SERVE=1                              keep serving on PORT (default 8080) instead of the burst demo
import { startTestServer, type TestServer } from '@infergate/testing';
import { sendBurst } from './demo.js';
import { startInferenceService } from './service.js';

const embedded: TestServer[] = [];
const tritonUrls = process.env.TRITON_URLS?.split(',') ?? [];
if (tritonUrls.length === 0) {
  for (let index = 0; index < 2; index++) {
    const server = await startTestServer({ simulatedGpu: { baseMs: 5, perRowMs: 0.05 } });
    embedded.push(server);
    tritonUrls.push(server.url);
  }
}

const serve = process.env.SERVE === '1';
const service = await startInferenceService({
  tritonUrls,
  port: serve ? Number(process.env.PORT ?? 8080) : 0,
});
console.log(`listening on ${service.url} (POST /double, GET /stats), replicas ${tritonUrls.join(' ')}`);

if (!serve) {
  const result = await sendBurst(service, Number(process.env.REQUESTS ?? 200));
  const { batches, items, meanBatchSize, rpcs } = result.stats.batcher;
  console.log(`${result.correct}/${result.requests} correct answers`);
  console.log(
    `batcher: ${items} calls in ${batches} batches (${rpcs} RPCs), mean batch size ${meanBatchSize.toFixed(1)}`,
  );
  for (const [index, server] of embedded.entries())
    console.log(`replica-${index}: ${server.stats('simulated_gpu').executions} executions`);
  console.log(`STATS ${JSON.stringify(result)}`);
  await service.close();
  await Promise.all(embedded.map((server) => server.stop()));
}
