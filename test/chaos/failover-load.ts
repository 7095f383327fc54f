import { performance } from 'node:perf_hooks';
import { createMicroBatcher, type MicroBatcher } from '@infergate/batcher';
import {
  buildInferRequest,
  type CallOptions,
  createTritonClient,
  InfergateError,
  InferResult,
  type TritonClient,
} from '@infergate/core';
import { createRouter, type InferRouter, type RouterConfig } from '@infergate/router';
import { type ServerProcess, startServerProcess } from './server-process.js';

/** One call's fate. */
export interface CallOutcome {
  id: number;
  /** performance.now() when sent and when settled. */
  sentAt: number;
  settledAt: number;
  /** 'ok', or the error code. */
  result: string;
  /** The row the caller got back was its own (2 × its id). */
  ownRow: boolean;
  /** The target that answered (successes only). */
  target: string | undefined;
}

export interface FailoverRig {
  readonly servers: readonly [ServerProcess, ServerProcess];
  readonly clients: readonly TritonClient[];
  readonly batchers: readonly MicroBatcher[];
  readonly router: InferRouter;
  /** Sends call `id` (its row carries the id) and records how it ended. */
  call(id: number, options?: CallOptions): Promise<CallOutcome>;
  /** Closes router, batchers, clients and servers, in that order. */
  close(): Promise<void>;
}

export interface FailoverRigOptions {
  /** Router options besides `targets`. @default {} (the defaults) */
  router?: Omit<RouterConfig, 'targets'>;
  /** Put a micro-batcher under each target. @default true */
  batchers?: boolean;
  baseMs?: number;
  perRowMs?: number;
}

/**
 * Two reference servers in child processes (`a` primary, `b` fallback), a client and a micro-batcher
 * per server, and a router a → b over the batchers: the rig of the failover scenario.
 */
export async function startFailoverRig(options: FailoverRigOptions = {}): Promise<FailoverRig> {
  const serverOptions = { baseMs: options.baseMs ?? 40, perRowMs: options.perRowMs ?? 0.1 };
  const servers = (await Promise.all([
    startServerProcess(serverOptions),
    startServerProcess(serverOptions),
  ])) as [ServerProcess, ServerProcess];
  const clients = servers.map((server) => createTritonClient({ url: server.url, enableGpuIpc: false }));
  const batchers =
    options.batchers === false ? [] : clients.map((client) => createMicroBatcher(client.grpc, { client }));
  const transports = options.batchers === false ? clients.map((client) => client.grpc) : batchers;
  const router = createRouter({
    ...options.router,
    targets: [
      { name: 'a', transport: transports[0] as MicroBatcher },
      { name: 'b', transport: transports[1] as MicroBatcher },
    ],
  });
  let answered: string | undefined;
  router.on('attempt', (event) => {
    if (event.outcome === 'success') answered = event.target;
  });
  const call = async (id: number, callOptions: CallOptions = {}): Promise<CallOutcome> => {
    const data = new Float32Array(4).fill(id);
    const request = buildInferRequest('chaos_gpu', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data },
    ]);
    const sentAt = performance.now();
    try {
      const response = await router.infer(request, callOptions);
      const target = answered;
      const row = new InferResult(response).output('OUTPUT0').data as Float32Array;
      return {
        id,
        sentAt,
        settledAt: performance.now(),
        result: 'ok',
        ownRow: row.length === 4 && row.every((value) => value === 2 * id),
        target,
      };
    } catch (error) {
      const code = error instanceof InfergateError ? error.code : `untyped: ${String(error)}`;
      return { id, sentAt, settledAt: performance.now(), result: code, ownRow: false, target: undefined };
    }
  };
  return {
    servers,
    clients,
    batchers,
    router,
    call,
    close: async () => {
      await router.close();
      await Promise.all(batchers.map((batcher) => batcher.close()));
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(servers.map((server) => server.stop()));
    },
  };
}

/** Counts outcomes by result: `{ ok: 1998, UNAVAILABLE: 2 }`. */
export function tally(outcomes: readonly CallOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome.result] = (counts[outcome.result] ?? 0) + 1;
  return counts;
}
