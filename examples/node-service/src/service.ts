import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMicroBatcher, type MicroBatcherStats } from '@infergate/batcher';
import { createTritonClient, InfergateError } from '@infergate/core';
import { type BreakerState, createInferRouter } from '@infergate/router';

export interface InferenceServiceOptions {
  /** Two (or more) replicas of the same Triton model repository. */
  tritonUrls: readonly string[];
  /** @default 0 (a free port) */
  port?: number;
}

export interface InferenceService {
  readonly url: string;
  stats(): { batcher: MicroBatcherStats; breakers: Record<string, BreakerState> };
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/**
 * `POST /double { values: number[] }` runs `simulated_gpu` (OUTPUT0 = 2 × INPUT0) for one row.
 * Concurrent requests are coalesced by the batcher; each batch is routed as a whole to one replica
 * (a weighted group: load balancing plus in-group failover). `GET /stats` shows the batching.
 */
export async function startInferenceService(options: InferenceServiceOptions): Promise<InferenceService> {
  const replicas = options.tritonUrls.map((url) => createTritonClient({ url, timeoutMs: 5_000 }));
  const router = createInferRouter({
    targets: replicas.map((client, index) => ({
      name: `replica-${index}`,
      transport: client.grpc,
      probe: { client, model: 'simulated_gpu' },
    })),
    route: { group: replicas.map((_, index) => ({ route: `replica-${index}` })) },
    attemptTimeoutMs: 2_000,
  });
  // Batcher above the router: batches first, then routes whole batches (identical replicas).
  const batcher = createMicroBatcher(router, {
    flush: 'adaptive',
    maxInFlightBatches: 2,
    maxQueueSize: 4_096,
    client: replicas[0], // reads max_batch_size of each model once
  });
  const client = createTritonClient({ url: options.tritonUrls[0] as string, transport: batcher });

  const server: Server = createServer((request, response) => {
    void (async () => {
      if (request.method === 'GET' && request.url === '/stats') {
        send(response, 200, { batcher: batcher.stats(), breakers: router.breakerStates() });
        return;
      }
      if (request.method !== 'POST' || request.url !== '/double') {
        send(response, 404, { error: 'POST /double or GET /stats' });
        return;
      }
      const { values } = (await readJson(request)) as { values: number[] };
      const result = await client.infer(
        'simulated_gpu',
        [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data: values }],
        { timeoutMs: 2_000 },
      );
      send(response, 200, { doubled: Array.from(result.output('OUTPUT0').data as Float32Array) });
    })().catch((thrown: unknown) => {
      const error = InfergateError.from(thrown);
      send(response, error.retryable ? 503 : 400, { error: { code: error.code, message: error.rawMessage } });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ batcher: batcher.stats(), breakers: router.breakerStates() }),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await batcher.close({ drain: true });
      await router.close(); // the router closes only what it made
      await client.close();
      await Promise.all(replicas.map((replica) => replica.close()));
    },
  };
}
