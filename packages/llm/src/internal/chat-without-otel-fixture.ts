// Child process of chat-without-otel.test.ts: a fresh process imports the llm adapters (and core,
// and the fake provider) from source, makes an OpenAI chat model with tracing on (the default),
// sends one call and one stream, and prints whether @opentelemetry/api was loaded after each step
// and whether the provider saw a `traceparent`. Then it registers an SDK (spans, metrics, W3C
// propagator), which loads the API (the check can see it), sends one more call through the same
// model, and prints the spans, the token points and the `traceparent` the provider received: an
// SDK registered after the model was made is used. The API, imported as ES module or required, is
// loaded from its CommonJS build (its `exports` give Node no ES module), which puts it in the
// require cache.
import { createRequire } from 'node:module';
import { startFakeOpenAI } from '@infergate/testing';
import { createOpenAIChatModel } from '../index.js';

const requireCache = createRequire(import.meta.url).cache;
const otelLoaded = () =>
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(path));
const request = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

const afterImport = otelLoaded();
const server = await startFakeOpenAI();
const model = createOpenAIChatModel({ apiKey: 'sk-without-otel', baseURL: server.url });
const afterConstruct = otelLoaded();
await model.chat(request);
for await (const _event of model.chatStream(request)) {
  // drain
}
const afterCall = otelLoaded();
const traceparentBefore = server.requests.map((seen) => seen.headers.traceparent ?? null);

const { installInMemoryTracing } = await import('../../../../test/unit/otel.js');
const { installInMemoryMetrics } = await import('../../../../test/unit/otel-metrics.js');
const tracing = installInMemoryTracing();
const metrics = installInMemoryMetrics();
const afterRegister = otelLoaded();
await model.chat(request);
const [span] = tracing.exporter.getFinishedSpans();
const traceparentAfter = server.requests[2]?.headers.traceparent;
const spanTraceparent =
  span === undefined ? undefined : `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
const tokens = (await metrics.points('gen_ai.client.token.usage')).map((point) => ({
  type: point.attributes['gen_ai.token.type'],
  sum: (point.value as { sum: number }).sum,
}));
await server.stop();
await metrics.uninstall();
tracing.uninstall();
console.log(
  `RESULT ${JSON.stringify({
    afterImport,
    afterConstruct,
    afterCall,
    afterRegister,
    traceparentBefore,
    spans: tracing.exporter.getFinishedSpans().map((finished) => finished.name),
    propagated: traceparentAfter !== undefined && traceparentAfter === spanTraceparent,
    tokens,
  })}`,
);
