import { CallRecorder } from './call-recorder.js';
import { FaultInjector } from './fault-injector.js';
import { InferenceStats } from './inference-stats.js';
import type { Abortable } from './internal/call-context.js';
import { Gate } from './internal/gate.js';
import { ModelRegistry } from './model-registry.js';
import { StatsBook } from './model-stats.js';
import type { Restriction } from './restriction.js';
import { LogSettingsStore, TraceSettingsStore } from './runtime-settings.js';
import { SequenceBook } from './sequence-book.js';
import { SharedMemoryRegistry } from './shared-memory.js';

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
  /** Triton-shaped measurements for ModelStatistics. */
  readonly inference = new InferenceStats();
  readonly sequences = new SequenceBook();
  readonly shm = new SharedMemoryRegistry();
  readonly trace = new TraceSettingsStore();
  readonly log = new LogSettingsStore();
  readonly calls = new CallRecorder(1000);
  readonly gate = new Gate();
  /** One controller per RPC in progress, so `kill()` can abort their executions. */
  readonly inFlight = new Set<Abortable>();
  readonly identity: ServerIdentity;
  readonly restrictions: readonly Restriction[];

  constructor(identity: ServerIdentity, restrictions: readonly Restriction[] = []) {
    this.identity = identity;
    this.restrictions = restrictions;
  }

  abortAll(reason: unknown): void {
    for (const controller of this.inFlight) controller.abort(reason);
  }
}
