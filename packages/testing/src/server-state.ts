import { CallRecorder } from './call-recorder.js';
import { FaultInjector } from './fault-injector.js';
import { Gate } from './internal/gate.js';
import { ModelRegistry } from './model-registry.js';
import { StatsBook } from './model-stats.js';

export interface ServerIdentity {
  name: string;
  version: string;
  extensions: readonly string[];
}

/** Everything the RPC handlers read and count; it outlives restarts of the gRPC server. */
export class ServerState {
  readonly models = new ModelRegistry();
  readonly faults = new FaultInjector();
  readonly stats = new StatsBook();
  readonly calls = new CallRecorder(1000);
  readonly gate = new Gate();
  /** One controller per RPC in progress, so `kill()` can abort their executions. */
  readonly inFlight = new Set<AbortController>();
  readonly identity: ServerIdentity;

  constructor(identity: ServerIdentity) {
    this.identity = identity;
  }

  abortAll(reason: unknown): void {
    for (const controller of this.inFlight) controller.abort(reason);
  }
}
