// Child process of router-without-zod.test.ts: a fresh process imports the router (and core) from
// source, makes an infer router and a chat router with options that set every kind of field (saved
// breaker states and a rate-limit watch included), and prints whether zod was loaded then; then asks
// for routerConfigSchema(), which loads it, and prints that too (the check can see zod). zod marks
// its first load, as CommonJS or ES module, with a global of its own (`__zod_globalConfig`); the
// require cache is checked as well.
import { createRequire } from 'node:module';
import { createChatRouter, createInferRouter, createRateLimitWatch, routerConfigSchema } from '../index.js';

const requireCache = createRequire(import.meta.url).cache;
const zodLoaded = () =>
  '__zod_globalConfig' in globalThis ||
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]zod[\\/]/.test(path));

const afterImport = zodLoaded();
const transport = { infer: async () => ({ outputs: [] }), stream: () => undefined };
const snapshot = {
  version: 1,
  state: { kind: 'open', trips: 2, openedAt: 1, halfOpenAt: 2 },
  lastFailureAt: 1,
};
const router = createInferRouter({
  name: 'triton',
  tracing: false,
  targets: [
    { name: 'a', transport: transport as never, breaker: { openMs: 500 }, cost: 0.001 },
    { name: 'b', transport: transport as never, probe: async () => true },
  ],
  route: { group: [{ route: 'a', weight: 2 }, { route: { fallback: ['b'] } }], strategy: 'p2c-ewma' },
  breaker: { volumeThreshold: 10, openJitter: 0 },
  retry: { maxRetries: 1, budget: { ratio: 0.1 } },
  attemptTimeoutMs: 1000,
  whenAllOpen: 'least-recently-failed',
  initialState: { a: snapshot as never },
  balance: { decayMs: 500 },
  admission: { maxInFlight: 64 },
  hedge: { delay: 20 },
  affinity: { maxLoadFactor: 1.25 },
  random: Math.random,
});
const watch = createRateLimitWatch({ minRemainingTokens: 100 });
const chat = createChatRouter({
  targets: [
    {
      name: 'openai',
      model: { provider: 'x', chat: async () => ({}), chatStream: () => undefined } as never,
      modelName: 'gpt',
      contextWindow: 128_000,
      rateLimits: watch,
    },
  ],
  prices: { lookup: () => undefined } as never,
});
const afterRouters = zodLoaded();
await router.close();
await chat.close();
routerConfigSchema();
console.log(`RESULT ${JSON.stringify({ afterImport, afterRouters, afterSchema: zodLoaded() })}`);
