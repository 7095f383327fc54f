// The stack the demo drives. Triton calls: TritonClient → router (fallback primary → secondary) →
// per endpoint: cost interceptor (GPU time per tenant) → micro-batcher → gRPC. Chat calls: chat
// router (Triton `generate` → OpenAI → Anthropic), each target wrapped in withCost.
// Embedded: two in-process reference servers with `simulated_gpu` and the fake LLM providers.
// --url: one real Triton (no fallback endpoint, no Triton fault injection) plus the fake providers.
import { createMicroBatcher, type MicroBatcher } from '@infergate/batcher';
import { createTritonClient, type TritonClient } from '@infergate/core';
import {
  ComputeMeter,
  type CostTracker,
  costInterceptor,
  createCostTracker,
  preloadTokenizers,
  withCost,
} from '@infergate/cost';
import {
  type ChatModel,
  createAnthropicChatModel,
  createOpenAIChatModel,
  createTritonChatModel,
} from '@infergate/llm';
import { type ChatRouter, createChatRouter, createInferRouter, type InferRouter } from '@infergate/router';
import {
  type FakeLlmServer,
  startFakeAnthropic,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import type { DemoArgs } from './args.js';
import { type ModelInputs, modelInputs } from './model-inputs.js';

export interface Endpoint {
  name: string;
  /** What it stands for, for the report. */
  label: string;
  url: string;
  /** USD per GPU-hour charged for its compute time. */
  usdPerGpuHour: number;
  client: TritonClient;
  batcher: MicroBatcher;
  meter: ComputeMeter;
}

/** A failure the demo injects, at a fraction of the run. */
export interface FaultStep {
  at: number;
  kind: 'fault' | 'recover';
  text: string;
  /** The fault window this step opens or closes (shaded in the report). */
  window: string;
  run(): Promise<void> | void;
}

export interface DemoEnvironment {
  mode: 'embedded' | 'external';
  /** Lines describing the setup, printed at the start. */
  setup: string[];
  inputs: ModelInputs;
  endpoints: Endpoint[];
  router: InferRouter;
  /** The application's client: inference goes through the router. */
  client: TritonClient;
  chat: ChatRouter;
  /** Chat targets in route order: the model each is asked for, the provider that answers. */
  chatTargets: { name: string; model: string; provider: string }[];
  costs: CostTracker;
  faults: FaultStep[];
  close(): Promise<void>;
}

/** Fast reconnects after a server comes back (grpc-js backs off up to 120 s by default). */
const CHANNEL_OPTIONS = { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 500 };

const PRICE_SOURCE = 'demo assumption';
const PRICE_DATE = '2025-01-01';
const OPENAI_MODEL = 'gpt-4o-mini';
const ANTHROPIC_MODEL = 'claude-haiku-4-5';

async function endpoint(
  name: string,
  label: string,
  url: string,
  model: string,
  usdPerGpuHour: number,
): Promise<Endpoint> {
  const client = createTritonClient({ url, timeoutMs: 5_000, channelOptions: CHANNEL_OPTIONS });
  // maxInFlightBatches 2: one batch executes while the next one travels; batch size grows with load.
  const batcher = createMicroBatcher(client.grpc, { client, maxQueueSize: 1024, maxInFlightBatches: 2 });
  const meter = new ComputeMeter({ source: client, model });
  return { name, label, url, usdPerGpuHour, client, batcher, meter };
}

/**
 * One execution of a full batch on each endpoint, between two statistics reads, so every meter has
 * a compute-per-row figure before the load starts (otherwise the first calls would be charged their
 * whole latency).
 */
async function primeMeters(endpoints: readonly Endpoint[], inputs: ModelInputs): Promise<void> {
  const rows = Math.max(1, Math.min(32, inputs.maxBatchSize));
  for (const target of endpoints) {
    await target.meter.sample();
    for (let i = 0; i < 3; i++) await target.client.infer(inputs.model, inputs.build(rows, i));
    await target.meter.sample();
    target.meter.start(1_000);
  }
}

function tritonRouter(endpoints: readonly Endpoint[], costs: CostTracker, model: string): InferRouter {
  return createInferRouter({
    name: 'triton',
    targets: endpoints.map((target) => ({
      name: target.name,
      transport: costInterceptor({
        tracker: costs,
        endpoint: target.name,
        meters: new Map([[model, target.meter]]),
      })(target.batcher),
      // While open, a ModelReady probe every 250 ms moves the breaker to half-open once it answers.
      probe: { client: target.client, model },
      // The channel under the batcher: a lost connection whose redial is refused takes the target
      // out of rotation at once.
      connectivity: target.client.grpc,
    })),
    breaker: {
      volumeThreshold: 20,
      errorThresholdPercentage: 50,
      // A short window: at thousands of calls per second, a second of history is plenty.
      rollingWindowMs: 1_000,
      rollingBuckets: 5,
      openMs: 500,
      maxOpenMs: 4_000,
      probeIntervalMs: 250,
    },
    retry: { maxRetries: 1, baseDelayMs: 20, maxDelayMs: 200 },
    // No attempt timeout: a crash is known from the refused connections at once (gateway failures),
    // and an attempt that outlives its call's 2 s deadline ends with the call without blaming the
    // survivor, which is busiest exactly then (its breaker opening would leave nothing to serve).
  });
}

function chatRouter(targets: { name: string; model: ChatModel; modelName: string }[]): ChatRouter {
  return createChatRouter({
    name: 'chat',
    targets,
    breaker: {
      volumeThreshold: 4,
      errorThresholdPercentage: 50,
      rollingWindowMs: 3_000,
      rollingBuckets: 6,
      openMs: 700,
      maxOpenMs: 3_000,
    },
    retry: { maxRetries: 1, baseDelayMs: 20, maxDelayMs: 300 },
    attemptTimeoutMs: 3_000,
    cooldownMs: 500,
    maxCooldownMs: 1_500,
  });
}

function tracker(endpoints: readonly { name: string; usdPerGpuHour: number }[], model: string): CostTracker {
  return createCostTracker({
    gpuPrices: endpoints.map((target) => ({
      endpoint: target.name,
      model,
      usdPerGpuHour: target.usdPerGpuHour,
      source: PRICE_SOURCE,
    })),
    // The self-hosted LLM has no list price: an internal transfer price stands in for it.
    prices: [
      {
        model: 'generate',
        provider: 'triton',
        input: 0.05,
        output: 0.2,
        source: PRICE_SOURCE,
        date: PRICE_DATE,
      },
    ],
    // A per-tenant soft limit over a rolling minute: crossing it is reported, the call goes ahead.
    budgets: [
      { id: 'tenant-minute', scope: ['tenant'], window: 'minute', kind: 'rolling', softLimitUsd: 0.008 },
    ],
    telemetry: false,
  });
}

async function fakeProviders(): Promise<{ openai: FakeLlmServer; anthropic: FakeLlmServer }> {
  const reply = (request: { messages: { role: string; content: string }[] }) =>
    `Sure. ${request.messages.at(-1)?.content ?? ''} Here is a short, deterministic answer from a fake provider.`;
  const [openai, anthropic] = await Promise.all([
    startFakeOpenAI({ reply, chunkDelayMs: 1 }),
    startFakeAnthropic({ reply, chunkDelayMs: 1 }),
  ]);
  return { openai, anthropic };
}

async function hostedModels(fakes: { openai: FakeLlmServer; anthropic: FakeLlmServer }, costs: CostTracker) {
  const openai = createOpenAIChatModel({
    apiKey: 'sk-demo-fake',
    baseURL: fakes.openai.url,
    defaultModel: OPENAI_MODEL,
    timeoutMs: 3_000,
  });
  const anthropic = createAnthropicChatModel({
    apiKey: 'sk-ant-demo-fake',
    baseURL: fakes.anthropic.url,
    defaultModel: ANTHROPIC_MODEL,
    timeoutMs: 3_000,
  });
  // One chat with each (not through withCost: nothing is charged) before the load: the first one
  // loads Node's fetch (undici and its WebAssembly HTTP parser) and the SDK's code paths, tens of ms
  // with the event loop blocked. Lazily that would be the first chat that falls back to them, when
  // the primary dies.
  const hello = { model: '', messages: [{ role: 'user' as const, content: 'hello' }], maxTokens: 4 };
  await Promise.all([openai.chat(hello, { timeoutMs: 3_000 }), anthropic.chat(hello, { timeoutMs: 3_000 })]);
  return [
    { name: 'openai', model: withCost(openai, { tracker: costs }), modelName: OPENAI_MODEL },
    { name: 'anthropic', model: withCost(anthropic, { tracker: costs }), modelName: ANTHROPIC_MODEL },
  ];
}

async function embedded(args: DemoArgs): Promise<DemoEnvironment> {
  // Two "GPUs": a dear primary and a cheaper secondary with a higher fixed cost per execution
  // (slower for small batches), sized to carry the whole load at full batches (64 rows: 15.8 ms on
  // the primary, 15.9 ms on the secondary), so the failover leaves no hole in throughput. A
  // secondary with less capacity would show its capacity instead: the flood tenant takes whatever
  // is free. One execution slot each; n rows take baseMs + perRowMs × n, as on a real GPU.
  const [primary, secondary]: TestServer[] = (await Promise.all([
    startTestServer({ simulatedGpu: { baseMs: 3, perRowMs: 0.2, maxBatchSize: 64 }, stopGraceMs: 200 }),
    startTestServer({ simulatedGpu: { baseMs: 5, perRowMs: 0.17, maxBatchSize: 64 }, stopGraceMs: 200 }),
  ])) as [TestServer, TestServer];
  const fakes = await fakeProviders();
  const model = args.model;
  const endpoints = [
    await endpoint('primary', 'simulated GPU: 3 ms + 0.2 ms/row', primary.url, model, 4.0),
    await endpoint('secondary', 'simulated GPU: 5 ms + 0.17 ms/row', secondary.url, model, 1.6),
  ];
  const first = endpoints[0] as Endpoint;
  const inputs = await modelInputs(first.client, model);
  await primeMeters(endpoints, inputs);
  const costs = tracker(endpoints, model);
  const router = tritonRouter(endpoints, costs, model);
  const client = createTritonClient({ url: first.url, transport: router, channelOptions: CHANNEL_OPTIONS });
  // The Triton-hosted LLM lives on the primary server too: killing it hits both routers.
  const llmClient = createTritonClient({ url: primary.url, channelOptions: CHANNEL_OPTIONS });
  const tritonLlm = createTritonChatModel({
    client: llmClient,
    model: 'generate',
    returnTokenCounts: true,
    returnFinishReason: true,
    timeoutMs: 3_000,
  });
  const chatTargets = [
    { name: 'triton-llm', model: withCost(tritonLlm, { tracker: costs }), modelName: 'generate' },
    ...(await hostedModels(fakes, costs)),
  ];
  const chat = chatRouter(chatTargets);
  const faults: FaultStep[] = [
    {
      at: 0.3,
      kind: 'fault',
      text: 'primary Triton killed (connections dropped, as in a crash)',
      window: 'primary Triton down',
      run: () => primary.kill(),
    },
    {
      at: 0.42,
      kind: 'fault',
      text: 'fake OpenAI starts answering 429 (rate-limit burst)',
      window: 'OpenAI 429s',
      run: () => fakes.openai.setFault({ kind: 'rate-limit', retryAfter: '1' }),
    },
    {
      at: 0.55,
      kind: 'recover',
      text: 'fake OpenAI rate limit lifted',
      window: 'OpenAI 429s',
      run: () => fakes.openai.setFault(undefined),
    },
    {
      at: 0.6,
      kind: 'recover',
      text: 'primary Triton restarted on the same port',
      window: 'primary Triton down',
      run: () => primary.restart(),
    },
  ];
  return {
    mode: 'embedded',
    setup: [
      `Triton  primary   ${primary.url}  simulated GPU, $4.00/GPU-h`,
      `        secondary ${secondary.url}  cheaper simulated GPU, $1.60/GPU-h`,
      `LLMs    Triton 'generate' (primary) → fake OpenAI → fake Anthropic`,
    ],
    inputs,
    endpoints,
    router,
    client,
    chat,
    chatTargets: chatTargets.map(({ name, model, modelName }) => ({
      name,
      model: modelName,
      provider: model.provider,
    })),
    costs,
    faults,
    async close() {
      for (const target of endpoints) target.meter.stop();
      await chat.close();
      await client.close();
      await router.close(); // the router closes only what it made: the batchers are closed here
      await Promise.all(endpoints.map((target) => target.batcher.close()));
      await Promise.all([...endpoints.map((target) => target.client.close()), llmClient.close()]);
      await Promise.all([primary.stop(), secondary.stop(), fakes.openai.close(), fakes.anthropic.close()]);
    },
  };
}

async function external(args: DemoArgs, url: string): Promise<DemoEnvironment> {
  const model = args.model;
  const price = 2.5;
  const target = await endpoint('triton', `Triton at ${url}`, url, model, price);
  const metadata = await target.client.serverMetadata();
  const inputs = await modelInputs(target.client, model);
  await primeMeters([target], inputs);
  const fakes = await fakeProviders();
  const costs = tracker([target], model);
  const router = tritonRouter([target], costs, model);
  const client = createTritonClient({ url, transport: router, channelOptions: CHANNEL_OPTIONS });
  const chatTargets = await hostedModels(fakes, costs);
  const chat = chatRouter(chatTargets);
  return {
    mode: 'external',
    setup: [
      `Triton  ${url}  ${metadata.name} ${metadata.version}, model '${model}'`,
      `        (max_batch_size ${inputs.maxBatchSize}; GPU time priced at an assumed $${price.toFixed(2)}/GPU-h)`,
      `LLMs    fake OpenAI → fake Anthropic (in-process stand-ins)`,
      `Faults  only the fake OpenAI 429 burst: a real Triton is not killed`,
    ],
    inputs,
    endpoints: [target],
    router,
    client,
    chat,
    chatTargets: chatTargets.map(({ name, model, modelName }) => ({
      name,
      model: modelName,
      provider: model.provider,
    })),
    costs,
    faults: [
      {
        at: 0.4,
        kind: 'fault',
        text: 'fake OpenAI starts answering 429 (rate-limit burst)',
        window: 'OpenAI 429s',
        run: () => fakes.openai.setFault({ kind: 'rate-limit', retryAfter: '1' }),
      },
      {
        at: 0.6,
        kind: 'recover',
        text: 'fake OpenAI rate limit lifted',
        window: 'OpenAI 429s',
        run: () => fakes.openai.setFault(undefined),
      },
    ],
    async close() {
      target.meter.stop();
      await chat.close();
      await client.close();
      await router.close();
      await target.batcher.close();
      await target.client.close();
      await Promise.all([fakes.openai.close(), fakes.anthropic.close()]);
    },
  };
}

export async function startEnvironment(args: DemoArgs): Promise<DemoEnvironment> {
  // withCost counts an OpenAI model's tokens with gpt-tokenizer, whose encodings are megabytes of
  // JavaScript compiled on first use: a few hundred ms with the event loop blocked. Lazily, that
  // first use would be the first chat that falls back to OpenAI — the moment the primary dies —
  // and every server, batcher and caller in this process would stop with it (the hole a 1 s tick
  // of the throughput chart showed after the kill). Loaded here, before any load.
  await preloadTokenizers();
  return args.url === undefined ? embedded(args) : external(args, args.url);
}
