/**
 * Which RPC attribute set to emit, from `OTEL_SEMCONV_STABILITY_OPT_IN` (a comma-separated list):
 * `rpc` emits the current RPC conventions only, `rpc/dup` both sets, anything else (or nothing) the
 * set this package has always emitted. `rpc/dup` wins over `rpc`, as the conventions' migration
 * guide asks. Read once: the variable is a process setting, and reading `process.env` per call
 * would cost the hot path.
 */
export interface RpcSemconv {
  /** `rpc.system`, `rpc.service`, short `rpc.method`, numeric `rpc.grpc.status_code`, `rpc.client.duration` (ms). */
  readonly old: boolean;
  /** `rpc.system.name`, fully qualified `rpc.method`, `rpc.status_code` text, `rpc.client.call.duration` (s). */
  readonly stable: boolean;
}

let cached: RpcSemconv | undefined;

/** Parses an `OTEL_SEMCONV_STABILITY_OPT_IN` value. */
export function parseRpcSemconv(value: string | undefined): RpcSemconv {
  const values = new Set((value ?? '').split(',').map((entry) => entry.trim().toLowerCase()));
  if (values.has('rpc/dup')) return { old: true, stable: true };
  if (values.has('rpc')) return { old: false, stable: true };
  return { old: true, stable: false };
}

export function rpcSemconv(): RpcSemconv {
  if (cached === undefined) {
    // Edge runtimes have no `process`; they get the default set.
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    cached = parseRpcSemconv(env?.OTEL_SEMCONV_STABILITY_OPT_IN);
  }
  return cached;
}

/** Forgets the parsed value so the next call reads the environment again (tests). */
export function resetRpcSemconv(): void {
  cached = undefined;
}
