import { createCallScope, ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import { loadOtel, NON_RECORDING_SPAN, otelRegistered } from '@infergate/core/internal/lazy-otel';
import type { Context, Span } from '@opentelemetry/api';
import { buildGraph, type Graph, INPUT, resolveReference } from './internal/pipeline-graph.js';
import { type PipelineOptions, pipelineOptionsSchema, type StepCost } from './pipeline-options.js';
import { valueMismatch } from './port-type.js';
import type { StepContext } from './step.js';
import { VERSION } from './version.js';

export interface PipelineRunOptions {
  /** Aborting cancels every running step. */
  signal?: AbortSignal;
  /** The run's one deadline, shared by its steps, in ms. @default the pipeline's `timeoutMs` */
  timeoutMs?: number;
  /** Passed to every step's calls (batcher fairness, cost attribution) and to `onCost`. */
  tenant?: string;
}

export type StepStatus = 'ok' | 'fallback' | 'failed' | 'cancelled';

export interface StepReport {
  status: StepStatus;
  durationMs: number | undefined;
  costUsd: number | undefined;
  error: InfergateError | undefined;
}

export interface PipelineResult {
  outputs: Record<string, unknown>;
  steps: Record<string, StepReport>;
  /** The sum of the steps' known costs. */
  costUsd: number;
  tenant: string | undefined;
}

/** How much longer than the run's time left a step's call may take (see `StepContext.callTimeoutMs`). */
const CALL_TIMEOUT_MARGIN_MS = 50;

const tracer = () => loadOtel().trace.getTracer('@infergate/pipeline', VERSION);

/**
 * The span of a run or step with `tracing: false`, or of a run that began while nothing was
 * registered with the OpenTelemetry API: records nothing and never becomes a parent.
 */
const NO_SPAN = NON_RECORDING_SPAN;

/**
 * A DAG of steps (Triton models, LLM calls, functions) with typed tensor and field mapping between
 * them, checked when it is built. A run starts each step as soon as the steps it reads are done, so
 * independent steps run at once; all share one deadline (`createCallScope`). When a step fails its
 * fallback supplies its outputs; without one the run aborts the running steps, starts no more, and
 * fails with the step's error. Each run is a span, each step a child span (so Triton's RPC spans and
 * `traceparent` sit under the step).
 */
export class Pipeline {
  readonly name: string;
  readonly #options: ReturnType<typeof resolve>;
  readonly #graph: Graph;

  constructor(options: PipelineOptions) {
    this.#options = resolve(options);
    this.name = this.#options.name;
    this.#graph = buildGraph(this.name, this.#options.inputs, this.#options.steps, this.#options.outputs);
  }

  /** The order steps would run in if there were no concurrency (dependencies first). */
  get order(): readonly string[] {
    return this.#graph.order;
  }

  async run(inputs: Record<string, unknown>, options: PipelineRunOptions = {}): Promise<PipelineResult> {
    const problems = Object.entries(this.#options.inputs).flatMap(([name, type]) => {
      if (!(name in inputs)) return [`input '${name}' is missing`];
      const mismatch = valueMismatch(type, inputs[name]);
      return mismatch === undefined ? [] : [`input '${name}': ${mismatch}`];
    });
    if (problems.length > 0) {
      throw new InfergateError(ErrorCode.InvalidArgument, `pipeline '${this.name}': ${problems.join('; ')}`);
    }
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs;
    const scope = createCallScope({
      signal: options.signal,
      timeoutMs,
      what: `pipeline '${this.name}'`,
      own: true,
    });
    // Nothing registered with the API (decision 0025, third addendum): no tracer and no context
    // manager, so the run has no span and its steps no context to enter; the API stays unloaded.
    const parent = otelRegistered() ? loadOtel().context.active() : undefined;
    const tracing = this.#options.tracing && parent !== undefined;
    const span = tracing
      ? tracer().startSpan(`pipeline ${this.name}`, {
          attributes: {
            'infergate.pipeline.name': this.name,
            ...(options.tenant === undefined ? {} : { 'infergate.tenant': options.tenant }),
          },
        })
      : NO_SPAN;
    const runContext = tracing ? loadOtel().trace.setSpan(parent, span) : parent;
    const run = new PipelineRun(this.name, this.#options, this.#graph, scope, runContext, options.tenant);
    try {
      const result = await run.execute(inputs);
      span.setAttribute('infergate.cost.usd', result.costUsd);
      return result;
    } catch (error) {
      const typed = InfergateError.from(error);
      failSpan(span, typed);
      throw typed;
    } finally {
      scope.dispose();
      span.end();
    }
  }
}

/** Marks a span failed with the error (loads nothing for `NO_SPAN`, which records nothing). */
function failSpan(span: Span, error: InfergateError): void {
  if (span === NO_SPAN) return;
  span.setStatus({ code: loadOtel().SpanStatusCode.ERROR, message: error.rawMessage });
  span.setAttribute('error.type', error.code);
}

function resolve(options: PipelineOptions) {
  return parseOptions(pipelineOptionsSchema, options, 'pipeline options');
}

/** Creates a pipeline; an invalid graph is an INVALID_ARGUMENT listing every problem. */
export function createPipeline(options: PipelineOptions): Pipeline {
  return new Pipeline(options);
}

class PipelineRun {
  readonly #values = new Map<string, Record<string, unknown>>();
  readonly #reports: Record<string, StepReport> = {};
  #failure: { step: string; error: InfergateError } | undefined;

  constructor(
    readonly name: string,
    readonly options: ReturnType<typeof resolve>,
    readonly graph: Graph,
    readonly scope: ReturnType<typeof createCallScope>,
    /** The run's context; `undefined` when it began while nothing was registered with the API. */
    readonly parent: Context | undefined,
    readonly tenant: string | undefined,
  ) {}

  async execute(inputs: Record<string, unknown>): Promise<PipelineResult> {
    this.#values.set(INPUT, inputs);
    const done = new Map<string, Promise<boolean>>();
    for (const step of this.graph.order) {
      const dependencies = (this.graph.dependencies.get(step) ?? []).map(
        (name) => done.get(name) ?? Promise.resolve(false),
      );
      done.set(
        step,
        Promise.all(dependencies).then((ready) =>
          ready.every(Boolean) ? this.#runStep(step) : this.#cancelled(step),
        ),
      );
    }
    await Promise.all(done.values());

    if (this.#failure !== undefined) {
      const { step, error } = this.#failure;
      throw new InfergateError(
        error.code,
        `pipeline '${this.name}': step '${step}' failed: ${error.rawMessage}`,
        {
          cause: error,
          details: { pipeline: this.name, step, steps: this.#reports },
        },
      );
    }
    const reason = this.scope.signal?.reason;
    if (this.scope.signal?.aborted === true) {
      const typed = InfergateError.from(reason);
      const stopped = Object.entries(this.#reports)
        .filter(([, report]) => report.status === 'cancelled')
        .map(([step]) => step);
      throw new InfergateError(
        typed.code,
        `${typed.rawMessage} (steps not finished: ${stopped.join(', ') || 'none'})`,
        {
          cause: reason,
          details: { pipeline: this.name, steps: this.#reports },
        },
      );
    }
    const outputs = Object.fromEntries(
      [...this.graph.outputs].map(([name, reference]) => [name, resolveReference(reference, this.#values)]),
    );
    const costUsd = Object.values(this.#reports).reduce((sum, report) => sum + (report.costUsd ?? 0), 0);
    return { outputs, steps: this.#reports, costUsd, tenant: this.tenant };
  }

  #aborted(): boolean {
    return this.scope.signal?.aborted === true;
  }

  #cancelled(step: string): boolean {
    this.#reports[step] = {
      status: 'cancelled',
      durationMs: undefined,
      costUsd: undefined,
      error: undefined,
    };
    return false;
  }

  async #runStep(name: string): Promise<boolean> {
    if (this.#aborted()) return this.#cancelled(name);
    const binding = this.options.steps[name];
    if (binding === undefined) return this.#cancelled(name);
    const values: Record<string, unknown> = {};
    for (const [input, { reference, binding: bound }] of this.graph.references.get(name) ?? []) {
      const value = resolveReference(reference, this.#values);
      values[input] = bound.map === undefined ? value : bound.map(value);
    }
    const parent = this.parent;
    const tracing = this.options.tracing && parent !== undefined;
    const span = tracing
      ? tracer().startSpan(
          `pipeline.step ${name}`,
          {
            attributes: {
              'infergate.pipeline.name': this.name,
              'infergate.pipeline.step': name,
              'infergate.pipeline.step.kind': binding.step.kind,
              ...(this.tenant === undefined ? {} : { 'infergate.tenant': this.tenant }),
            },
          },
          parent,
        )
      : NO_SPAN;
    const stepContext = tracing ? loadOtel().trace.setSpan(parent, span) : parent;
    const context: StepContext = {
      pipeline: this.name,
      step: name,
      signal: this.scope.signal,
      remainingMs: () => this.scope.remainingMs(),
      callTimeoutMs: () => {
        const remaining = this.scope.remainingMs();
        return remaining === undefined ? undefined : remaining + CALL_TIMEOUT_MARGIN_MS;
      },
      tenant: this.tenant,
    };
    const started = performance.now();
    try {
      const outcome = await this.scope.race(
        stepContext === undefined
          ? binding.step.run(values, context)
          : loadOtel().context.with(stepContext, () => binding.step.run(values, context)),
      );
      const missing = Object.keys(binding.step.outputs).filter((output) => !(output in outcome.outputs));
      if (missing.length > 0) {
        throw new InfergateError(ErrorCode.Internal, `step '${name}' returned no ${missing.join(', ')}`);
      }
      this.#values.set(name, outcome.outputs);
      return this.#finish(name, span, started, 'ok', outcome.costUsd);
    } catch (error) {
      const typed = InfergateError.from(error);
      // Cancelled by the run (deadline, caller, another step): not this step's failure.
      if (this.#aborted() && this.#failure?.step !== name) {
        this.#end(span, typed);
        this.#reports[name] = {
          status: 'cancelled',
          durationMs: performance.now() - started,
          costUsd: undefined,
          error: typed,
        };
        return false;
      }
      if (binding.fallback !== undefined) {
        try {
          const outputs = await this.scope.race(Promise.resolve(binding.fallback(typed, values)));
          this.#values.set(name, outputs);
          span.setAttribute('infergate.pipeline.step.fallback_reason', typed.code);
          return this.#finish(name, span, started, 'fallback', undefined);
        } catch (fallbackError) {
          return this.#fail(name, span, started, InfergateError.from(fallbackError));
        }
      }
      return this.#fail(name, span, started, typed);
    }
  }

  #finish(
    name: string,
    span: Span,
    started: number,
    status: 'ok' | 'fallback',
    costUsd: number | undefined,
  ): boolean {
    this.#reports[name] = { status, durationMs: performance.now() - started, costUsd, error: undefined };
    span.setAttribute('infergate.pipeline.step.status', status);
    if (costUsd !== undefined) {
      span.setAttribute('infergate.cost.usd', costUsd);
      const entry: StepCost = { pipeline: this.name, step: name, tenant: this.tenant, costUsd };
      this.options.onCost?.(entry);
    }
    span.end();
    return true;
  }

  #fail(name: string, span: Span, started: number, error: InfergateError): boolean {
    this.#reports[name] = {
      status: 'failed',
      durationMs: performance.now() - started,
      costUsd: undefined,
      error,
    };
    this.#end(span, error);
    if (this.#failure === undefined) {
      this.#failure = { step: name, error };
      // Stops the other running steps and keeps the rest from starting.
      this.scope.abort(
        new InfergateError(ErrorCode.Cancelled, `pipeline '${this.name}' cancelled: step '${name}' failed`, {
          cause: error,
        }),
      );
    }
    return false;
  }

  #end(span: Span, error: InfergateError): void {
    failSpan(span, error);
    span.end();
  }
}
