// Run: node_modules/.bin/tsx --conditions=source examples/pipeline/src/index.ts
//   TRITON_URL: a real server with `identity` and `add_sub`; else the embedded reference server.
import { createTritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { runPipeline } from './pipeline.js';
import { installTracing, spanTree } from './tracing.js';

const tracing = installTracing(); // before any client is created
const server: TestServer | undefined =
  process.env.TRITON_URL === undefined ? await startTestServer() : undefined;
const client = createTritonClient({ url: server?.url ?? (process.env.TRITON_URL as string) });

const result = await runPipeline(client, ['1,2,3', '10,20,30,40', '0.25']);
for (const [index, record] of result.records.entries())
  console.log(`${record} → ${result.scores[index]?.slice(0, 4).join(', ')}, …`);
const spans = tracing.spans().filter((span) => span.spanContext().traceId === result.traceId);
console.log(`trace ${result.traceId}: ${spans.length} spans`);
for (const line of spanTree(spans)) console.log(`  ${line}`);

await client.close();
await server?.stop();
await tracing.uninstall();
