// Run: node_modules/.bin/tsx --conditions=source examples/pipeline/src/index.ts
//   TRITON_URL: a real server with `identity` and `add_sub`; else the embedded reference server.
//   OPENAI_API_KEY (and OPENAI_BASE_URL, OPENAI_MODEL): a real provider; else a local fake one.
import { createTritonClient } from '@infergate/core';
import { createOpenAIChatModel } from '@infergate/llm';
import { type FakeLlmServer, startFakeOpenAI, startTestServer, type TestServer } from '@infergate/testing';
import { createClassifyPipeline } from './pipeline.js';
import { installTracing, spanTree } from './tracing.js';

const tracing = installTracing(); // before any client is created
const server: TestServer | undefined =
  process.env.TRITON_URL === undefined ? await startTestServer() : undefined;
const fakeLlm: FakeLlmServer | undefined =
  process.env.OPENAI_API_KEY === undefined
    ? await startFakeOpenAI({
        reply: (request) =>
          `Each label is the strongest feature of its record (${request.messages.at(-1)?.content.split(': ')[1] ?? ''}).`,
      })
    : undefined;
const client = createTritonClient({ url: server?.url ?? (process.env.TRITON_URL as string) });
const chat = createOpenAIChatModel({
  apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
  ...(fakeLlm !== undefined
    ? { baseURL: fakeLlm.url }
    : process.env.OPENAI_BASE_URL
      ? { baseURL: process.env.OPENAI_BASE_URL }
      : {}),
});
const pipeline = createClassifyPipeline({
  triton: client.transport,
  chat,
  chatModel: process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
});

const records = ['1,2,3', '10,20,30,40', '0.25,9'];
const result = await pipeline.run(
  { records: { datatype: 'BYTES', shape: [records.length], data: records } },
  { tenant: 'demo' },
);
console.log(`labels: ${(result.outputs.labels as string[]).join(', ')}`);
console.log(`explanation: ${String(result.outputs.explanation)}`);
for (const [step, report] of Object.entries(result.steps)) console.log(`  ${step}: ${report.status}`);
for (const line of spanTree(tracing.spans())) console.log(`  ${line}`);

await client.close();
await fakeLlm?.close();
await server?.stop();
await tracing.uninstall();
