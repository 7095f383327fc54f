import type { PortType } from './port-type.js';

/** What a step's `run` gets besides its input values. */
export interface StepContext {
  pipeline: string;
  step: string;
  /** Aborts when the pipeline's deadline passes, the caller cancels, or another step fails. */
  signal: AbortSignal | undefined;
  /** What is left of the pipeline's one deadline, in ms; undefined without one. */
  remainingMs(): number | undefined;
  /**
   * The `timeoutMs` to give a call: the time left plus a small margin. The run's deadline cancels the
   * call through `signal` first (so the step counts as cancelled, not failed); the server still
   * learns the deadline and drops work past it.
   */
  callTimeoutMs(): number | undefined;
  /** The tenant the run is for: pass it on so batching fairness and cost attribution see it. */
  tenant: string | undefined;
}

export interface StepOutcome {
  /** One value per declared output. */
  outputs: Record<string, unknown>;
  /** What the step cost, when the step knows (LLM tokens × price, GPU time × price). */
  costUsd?: number | undefined;
}

/** One unit of work in a pipeline: typed inputs and outputs, and how to run it. */
export interface Step {
  /** e.g. 'triton', 'llm', 'function' (a span attribute). */
  kind: string;
  inputs: Readonly<Record<string, PortType>>;
  outputs: Readonly<Record<string, PortType>>;
  run(values: Record<string, unknown>, context: StepContext): Promise<StepOutcome>;
}

/** A step from a plain function: for glue (parsing, formatting) between model calls. */
export function functionStep(definition: Omit<Step, 'kind'>): Step {
  return { kind: 'function', ...definition };
}
