import type { ConnectivityListener, ConnectivityState } from './connectivity.js';
import type { Parameters } from './parameters.js';
import type { EncodedTensor, SharedMemoryBinding } from './tensor.js';

/** An output the caller asks for, optionally as top-k classification. */
export interface RequestedOutput {
  name: string;
  /** Ask Triton for the top `classCount` classes of this output, as BYTES "value:index[:label]". */
  classCount?: number;
  /** Have the server write this output into a registered shared-memory region instead. */
  sharedMemory?: SharedMemoryBinding;
  parameters?: Parameters;
  /**
   * Memory of the caller's that this output's raw little-endian bytes are written into (a typed
   * array, Buffer or DataView). The result's `data` is then a typed array of the output's datatype
   * over this memory (this very object when it is already that typed array with the output's element
   * count; FP16/BF16 give their raw bit patterns as a Uint16Array). Not for BYTES or classification
   * outputs, not with `sharedMemory`, not on streams; an answer that does not fit fails with
   * OUT_OF_RANGE naming both sizes (the server did run the request). On the http2 engine, a call whose
   * outputs are all bound so receives its answer into pooled memory instead of fresh memory per call
   * (decision 0026).
   */
  into?: ArrayBufferView;
}

/** One inference request in wire form: what every transport, batcher and router carries. */
export interface InferRequest {
  model: string;
  /** Empty or absent: the server's version policy chooses. */
  modelVersion?: string;
  id?: string;
  inputs: readonly EncodedTensor[];
  /** Absent: every output. */
  outputs?: readonly RequestedOutput[];
  parameters?: Parameters;
}

export interface InferResponse {
  model: string;
  modelVersion: string;
  id: string;
  outputs: readonly EncodedTensor[];
  parameters: Parameters;
}

/** Per-call options every layer honours. */
export interface CallOptions {
  /** Aborting cancels the call (code CANCELLED). */
  signal?: AbortSignal;
  /**
   * Client-side deadline for the call, in ms (code DEADLINE_EXCEEDED). Any finite positive value is
   * a deadline that fires when due, also beyond 2^31 − 1 ms (setTimeout's limit, about 24.8 days).
   * `Infinity` means no deadline: it overrides the client's default `timeoutMs`, arms no timer and
   * sends no grpc-timeout.
   */
  timeoutMs?: number;
  /** Extra gRPC metadata / HTTP headers for this call. */
  headers?: Readonly<Record<string, string>>;
  /** Tenant the call is attributed to (batching fairness, cost). */
  tenant?: string;
  /** Triton priority level (1 is highest); 0 or absent uses the model's default. */
  priority?: number;
  /** Free-form values that interceptors pass along. */
  context?: ReadonlyMap<string | symbol, unknown>;
}

/**
 * The one shape every hop implements: a gRPC endpoint, a batcher, a router. Layers stack because
 * each takes and returns this.
 */
export interface InferTransport {
  infer(request: InferRequest, options: CallOptions): Promise<InferResponse>;
  stream(request: InferRequest, options: CallOptions): AsyncIterable<InferResponse>;
  /** Releases connections, timers and regions. */
  close?(): Promise<void> | void;
  /** The connection's state now (gRPC transports; see connectivity.ts). */
  connectivityState?(connect?: boolean): ConnectivityState;
  /** Reports each change of the connection's state until the returned function is called. */
  watchConnectivity?(listener: ConnectivityListener): () => void;
}

/** Wraps a transport to add a cross-cutting concern (tracing, auth, cost, metrics). */
export type Interceptor = (next: InferTransport) => InferTransport;

/** Applies interceptors so that the first one listed is the outermost. */
export function applyInterceptors(
  transport: InferTransport,
  interceptors: readonly Interceptor[],
): InferTransport {
  let wrapped = transport;
  for (let i = interceptors.length - 1; i >= 0; i--) wrapped = (interceptors[i] as Interceptor)(wrapped);
  return wrapped;
}
