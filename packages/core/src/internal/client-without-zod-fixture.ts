// Child process of client-without-zod.test.ts: a fresh process makes a client (default http2
// engine) from core's sources, with options that set every kind of field, and prints whether zod
// was loaded then; then asks for clientOptionsSchema(), which loads it, and prints that too (the
// check can see zod). core loads zod with require (lazy-modules.ts), so it shows in the require
// cache.
import { createRequire } from 'node:module';
import { clientOptionsSchema, createTritonClient } from '../index.js';

const requireCache = createRequire(import.meta.url).cache;
const zodLoaded = () => Object.keys(requireCache).some((path) => /[\\/]node_modules[\\/]zod[\\/]/.test(path));

const client = createTritonClient({
  url: ['127.0.0.1:1', '127.0.0.2:1'],
  loadBalancing: 'pick_first',
  compression: 'gzip',
  enableGpuIpc: false,
  sharedMemory: { thresholdBytes: 4096 },
  timeoutMs: 5000,
  headers: { authorization: 'Bearer token' },
  accessToken: 'secret',
  keepalive: { timeMs: 60_000, permitWithoutCalls: true },
  maxMessageBytes: 64 * 1024 * 1024,
  interceptors: [(next) => next],
  channelOptions: { 'grpc.max_reconnect_backoff_ms': 1000 },
});
const afterClient = zodLoaded();
const engine = client.grpc.engine;
await client.close();
clientOptionsSchema();
console.log(`RESULT ${JSON.stringify({ afterClient, engine, afterSchema: zodLoaded() })}`);
