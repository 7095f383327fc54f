// Run: node_modules/.bin/tsx --conditions=source examples/express-app/src/index.ts
//   TRITON_URL, OPENAI_BASE_URL, OPENAI_API_KEY: real services; without them the embedded reference
//   server and fake OpenAI are started. PORT (default 3000).
import { startFakeOpenAI, startTestServer } from '@infergate/testing';
import { createApp } from './app.js';

const tritonUrl = process.env.TRITON_URL ?? (await startTestServer()).url;
const openaiBaseUrl = process.env.OPENAI_BASE_URL ?? (await startFakeOpenAI({ chunkDelayMs: 50 })).url;
const { app } = createApp({
  tritonUrl,
  openaiBaseUrl,
  openaiApiKey: process.env.OPENAI_API_KEY ?? 'sk-fake',
  apiKeys: { 'key-acme': 'acme', 'key-tiny': 'tiny' },
  dailyBudgetUsd: { acme: 5, tiny: 0.0001 },
});
const port = Number(process.env.PORT ?? 3000);
app.listen(port, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${port} (Triton ${tritonUrl}, OpenAI ${openaiBaseUrl})`);
  console.log(`try: curl -s -H 'x-api-key: key-acme' -H 'content-type: application/json' \\
  -d '{"messages":[{"role":"user","content":"hello there"}],"stream":true}' http://127.0.0.1:${port}/v1/chat`);
});
