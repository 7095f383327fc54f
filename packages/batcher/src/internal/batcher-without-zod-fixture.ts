// Child process of batcher-without-zod.test.ts: a fresh process imports the batcher (and core) from
// source, makes a batcher with options that set every field, and prints whether zod was loaded
// then; then asks for microBatcherOptionsSchema(), which loads it, and prints that too (the check
// can see zod). zod marks its first load, as CommonJS or ES module, with a global of its own
// (`__zod_globalConfig`); the require cache is checked as well.
import { createRequire } from 'node:module';
import { createMicroBatcher, microBatcherOptionsSchema } from '../index.js';

const requireCache = createRequire(import.meta.url).cache;
const zodLoaded = () =>
  '__zod_globalConfig' in globalThis ||
  Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]zod[\\/]/.test(path));

const afterImport = zodLoaded();
const transport = { infer: async () => ({ outputs: [] }), stream: () => undefined };
const batcher = createMicroBatcher(transport as never, {
  maxBatchSize: 32,
  maxQueueDelayMs: 5,
  flush: 'fixed',
  serverBatching: 'defer',
  statsIntervalMs: 2000,
  getModelStatistics: async () => ({ requests: 0, executions: 0, queueUs: 0, computeUs: 0 }),
  maxInFlightBatches: 4,
  maxQueueSize: 512,
  maxQueueWaitMs: 250,
  maxQueueBytes: 1024 * 1024,
  tenants: { gold: { weight: 3 } },
  priorityLevels: 2,
  models: { resnet: { maxBatchSize: 8 } },
  getModelConfig: async () => ({ maxBatchSize: 8 }),
  client: { modelConfig: async () => ({ maxBatchSize: 8 }) },
  maxBisectRpcs: 4,
  tracing: false,
});
const afterBatcher = zodLoaded();
await batcher.close();
microBatcherOptionsSchema();
console.log(`RESULT ${JSON.stringify({ afterImport, afterBatcher, afterSchema: zodLoaded() })}`);
