import { performance } from 'node:perf_hooks';
import { createMicroBatcher, type MicroBatcher } from '@infergate/batcher';
import {
  buildInferRequest,
  type CallOptions,
  createTritonClient,
  InfergateError,
  type InferRequest,
  type InferResponse,
  InferResult,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import { createRouter, type InferRouter, type RouterConfig } from '@infergate/router';
import { createFaultProxy, type FaultProxy } from '@infergate/testing';

/** One call's fate. */
export interface CallOutcome {
  id: number;
  /** performance.now() when sent and when settled. */
  sentAt: number;
  settledAt: number;
  /** 'ok', or the error code ('untyped: …' for anything that is not an InfergateError). */
  result: string;
  /** The row the caller got back was its own (2 × its id). */
  ownRow: boolean;
}

/** Where each call id went and how each attempt ended, per target (`a:ok`, `b:QUEUE_FULL`, …). */
export type AttemptLog = Map<number, string[]>;

export interface ChaosRig {
  /** Addresses of the endpoints the router's targets talk to (through the proxies, when any). */
  readonly urls: readonly [string, string];
  /** A fault proxy in front of each endpoint (with `proxies: true`). */
  readonly proxies: readonly FaultProxy[];
  readonly clients: readonly TritonClient[];
  readonly batchers: readonly MicroBatcher[];
  readonly router: InferRouter;
  readonly attempts: AttemptLog;
  /** Sends call `id` to `model` (its row carries the id) and records how it ended. */
  call(id: number, options?: CallOptions): Promise<CallOutcome>;
  /**
   * One call straight to each endpoint's transport (not through the router): connects both
   * channels and has each batcher read the model's batch size, as a fallback in service would have.
   */
  warm(): Promise<void>;
  /** Closes router, batchers, clients and proxies, in that order (not the endpoints). */
  close(): Promise<void>;
}

export interface ChaosRigOptions {
  /** The two endpoints' gRPC addresses: `a` (primary) and `b` (fallback). */
  endpoints: readonly [string, string];
  /** A batching FP32 model with INPUT0/OUTPUT0 = 2 × INPUT0 dims [-1]. @default 'chaos_gpu' */
  model?: string;
  /** OUTPUT0 ÷ INPUT0 of the model. @default 2 */
  factor?: number;
  /** Router options besides `targets`. @default {} (the defaults) */
  router?: Omit<RouterConfig, 'targets'>;
  /** Put a micro-batcher under each target. @default true */
  batchers?: boolean;
  /** Put a fault proxy in front of each endpoint. @default false */
  proxies?: boolean;
  /** Extra client options (e.g. an access token for a real Triton). */
  client?: { accessToken?: string };
}

/** Records each attempt's outcome per call id, at the target (the router's events carry no id). */
function recording(name: string, inner: InferTransport, log: AttemptLog): InferTransport {
  const note = (request: InferRequest, outcome: string) => {
    const id = Number(request.id);
    const entry = log.get(id);
    if (entry === undefined) log.set(id, [`${name}:${outcome}`]);
    else entry.push(`${name}:${outcome}`);
  };
  return {
    // One reaction on the target's promise, not an async function around it: the benchmark times
    // the failover wave through this wrapper, and each extra microtask turn per call delays the
    // first call that reaches the fallback by one pass over every call of the wave.
    infer(request, options) {
      return inner.infer(request, options).then(
        (response) => {
          note(request, 'ok');
          return response;
        },
        (error: unknown) => {
          note(request, error instanceof InfergateError ? error.code : 'untyped');
          throw error;
        },
      );
    },
    stream: (request, options) => inner.stream(request, options),
  };
}

/**
 * The failover rig: a client and a micro-batcher per endpoint, and a router a → b over them. The
 * endpoints are the caller's (child processes, a real Triton), so a test can kill one for real.
 */
export async function startChaosRig(options: ChaosRigOptions): Promise<ChaosRig> {
  const model = options.model ?? 'chaos_gpu';
  const factor = options.factor ?? 2;
  const proxies =
    options.proxies === true
      ? await Promise.all(options.endpoints.map((target) => createFaultProxy({ target })))
      : [];
  const urls = (proxies.length > 0 ? proxies.map((proxy) => proxy.url) : options.endpoints) as [
    string,
    string,
  ];
  const clients = urls.map((url) => createTritonClient({ url, enableGpuIpc: false, ...options.client }));
  const batchers =
    options.batchers === false ? [] : clients.map((client) => createMicroBatcher(client.grpc, { client }));
  const inner: InferTransport[] =
    options.batchers === false ? clients.map((client) => client.grpc) : batchers;
  const attempts: AttemptLog = new Map();
  const router = createRouter({
    ...options.router,
    targets: [
      // The channel under each batcher: the router ejects a target whose connection is refused.
      {
        name: 'a',
        transport: recording('a', inner[0] as InferTransport, attempts),
        connectivity: (clients[0] as TritonClient).grpc,
      },
      {
        name: 'b',
        transport: recording('b', inner[1] as InferTransport, attempts),
        connectivity: (clients[1] as TritonClient).grpc,
      },
    ],
  });
  const call = async (id: number, callOptions: CallOptions = {}): Promise<CallOutcome> => {
    const data = new Float32Array(4).fill(id);
    const request = buildInferRequest(model, [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data }], {
      requestId: String(id),
    });
    const sentAt = performance.now();
    try {
      const response: InferResponse = await router.infer(request, callOptions);
      const row = new InferResult(response).output('OUTPUT0').data as Float32Array;
      return {
        id,
        sentAt,
        settledAt: performance.now(),
        result: 'ok',
        ownRow: row.length === 4 && row.every((value) => value === factor * id),
      };
    } catch (error) {
      const code = error instanceof InfergateError ? error.code : `untyped: ${String(error)}`;
      return { id, sentAt, settledAt: performance.now(), result: code, ownRow: false };
    }
  };
  return {
    urls,
    proxies,
    clients,
    batchers,
    router,
    attempts,
    call,
    warm: async () => {
      // Ids -1 and -2: never a call's id.
      const request = (index: number) =>
        buildInferRequest(model, [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: new Float32Array(4).fill(-1 - index) },
        ]);
      await Promise.all(inner.map((transport, index) => transport.infer(request(index), {})));
    },
    close: async () => {
      await router.close();
      await Promise.all(batchers.map((batcher) => batcher.close()));
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(proxies.map((proxy) => proxy.close()));
    },
  };
}

/** Counts outcomes by result: `{ ok: 1998, UNAVAILABLE: 2 }`. */
export function tally(outcomes: readonly CallOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome.result] = (counts[outcome.result] ?? 0) + 1;
  return counts;
}

/**
 * Ids that ran more than once on the servers (`ran`: per server, id → executions) although the
 * router made no second attempt for them after a failed one: a call that ran twice without a retry.
 */
export function ranTwiceWithoutRetry(
  ran: readonly ReadonlyMap<number, number>[],
  attempts: AttemptLog,
): number[] {
  const total = new Map<number, number>();
  for (const server of ran) for (const [id, count] of server) total.set(id, (total.get(id) ?? 0) + count);
  const twice: number[] = [];
  for (const [id, count] of total) {
    if (count <= 1) continue;
    const tried = attempts.get(id) ?? [];
    const retried = tried.filter((entry) => !entry.endsWith(':ok')).length > 0;
    if (!retried || count > tried.length) twice.push(id);
  }
  return twice;
}
