// Run: node_modules/.bin/tsx --conditions=source examples/serverless-handler/src/index.ts
// Simulates a function instance: two Lambda invocations and two fetch invocations (cold, then warm).
// TRITON_URLS / OPENAI_BASE_URL point at real services; without them the embedded reference servers
// and fake OpenAI are started (and stopped at the end). Nothing else is closed: like a real function
// instance, the process must be able to exit (or be frozen) with the gateway still open.
import { startFakeOpenAI, startTestServer } from '@infergate/testing';
import { createHandlers } from './handlers.js';

const stops: Array<() => Promise<void>> = [];
const env = { ...process.env };
if (env.TRITON_URLS === undefined) {
  const [primary, secondary] = await Promise.all([startTestServer(), startTestServer()]);
  stops.push(
    () => primary.stop(),
    () => secondary.stop(),
  );
  env.TRITON_URLS = `${primary.url},${secondary.url}`;
}
if (env.OPENAI_BASE_URL === undefined) {
  const openai = await startFakeOpenAI();
  stops.push(() => openai.close());
  env.OPENAI_BASE_URL = openai.url;
  env.OPENAI_API_KEY = 'sk-fake';
}

const { gateway, lambda, fetch } = createHandlers(env);
const context = { awsRequestId: 'local-1', getRemainingTimeInMillis: () => 30_000 };
for (const text of ['cold start', 'warm start']) {
  console.log(`lambda ${JSON.stringify(await lambda({ text, tenant: 'acme' }, context))}`);
}
for (const text of ['fetch one', 'fetch two']) {
  const response = await fetch(
    new Request('http://function.local/', { method: 'POST', body: JSON.stringify({ text }) }),
  );
  console.log(`fetch ${response.status} ${await response.text()}`);
}
console.log(`builds ${gateway.builds}`);
console.log(`breakers ${JSON.stringify(gateway.current?.router.breakerStates())}`);
await Promise.all(stops.map((stop) => stop()));
console.log('DONE');
