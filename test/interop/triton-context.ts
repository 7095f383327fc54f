// What test/interop/global-setup.ts hands to the interop test files (vitest `provide` / `inject`).
// Types only: imported by the global setup (main process) and by shared-triton.ts (test workers).

/** The one Triton of the interop run. */
export interface SharedTritonInfo {
  grpcAddress: string;
  httpAddress: string;
  /** Triton's Prometheus metrics endpoint (`http://<metricsAddress>/metrics`). */
  metricsAddress: string;
  /** Token for the restricted `trace` and `logging` groups. */
  accessToken: string;
  /** Every server log line of the run (the harness appends to it). */
  logFile: string;
}

/** Why the shared Triton is not there (startTriton's message, with its log tail). */
export interface SharedTritonFailure {
  error: string;
  logFile: string;
}

export type ProvidedTriton = SharedTritonInfo | SharedTritonFailure;

declare module 'vitest' {
  export interface ProvidedContext {
    triton: ProvidedTriton;
  }
}
