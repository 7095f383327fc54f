import { z } from 'zod';
import type { Binding } from './internal/pipeline-graph.js';
import type { PortType } from './port-type.js';
import type { Step } from './step.js';

const portTypeSchema: z.ZodType<PortType> = z.union([
  z
    .object({
      kind: z.literal('tensor'),
      datatype: z.string().optional(),
      shape: z.array(z.number().int().min(-1)).optional(),
    })
    .strict() as z.ZodType<PortType>,
  z.object({ kind: z.literal('text') }).strict(),
  z.object({ kind: z.literal('json') }).strict(),
]);

const fn = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', `${what} must be a function`);

const bindingSchema = z.union([
  z.string().min(1),
  z
    .object({
      from: z.string().min(1),
      map: fn<(value: unknown) => unknown>('map').optional(),
      type: portTypeSchema.optional(),
    })
    .strict(),
]);

/** A step's fallback: outputs to use when the step fails (not when the pipeline is cancelled or out of time). */
export type StepFallback = (
  error: Error,
  values: Record<string, unknown>,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

const stepBindingSchema = z
  .object({
    /** The step (`tritonStep`, `llmStep`, `functionStep`). */
    step: z.custom<Step>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as Step).run === 'function' &&
        typeof (value as Step).inputs === 'object' &&
        typeof (value as Step).outputs === 'object',
      'step must be a step (tritonStep, llmStep or functionStep)',
    ),
    /** Each step input's source: 'input.<name>', '<step>.<output>[.field…]', or { from, map, type }. @default {} */
    inputs: z.record(z.string(), bindingSchema).default({}),
    /** Outputs to use when the step fails; without it the failure cancels the rest. @default none */
    fallback: fn<StepFallback>('fallback').optional(),
  })
  .strict();

export const pipelineOptionsSchema = z
  .object({
    /** Names the pipeline in spans and errors. */
    name: z.string().min(1),
    /** The values a run takes, with their types. @default {} */
    inputs: z.record(z.string().min(1), portTypeSchema).default({}),
    /** The steps, by name (not 'input'). */
    steps: z.record(z.string().min(1), stepBindingSchema),
    /** What a run returns: output name → reference. */
    outputs: z.record(z.string().min(1), z.string().min(1)),
    /** Deadline of a whole run, shared by its steps, in ms; a run's own `timeoutMs` overrides it. @default none */
    timeoutMs: z.number().positive().finite().optional(),
    /** Called once per step that reports a cost, with the run's tenant. @default none */
    onCost: fn<(entry: StepCost) => void>('onCost').optional(),
    /**
     * A span per run and per step through @opentelemetry/api (a no-op unless an SDK is registered).
     * False: no pipeline spans; the steps' own spans (Triton RPCs, LLM calls) sit under the caller's.
     * @default true
     */
    tracing: z.boolean().default(true),
  })
  .strict();

// An interface, not a type alias, so that the API reference lists every field.
/** Options of `createPipeline`. */
export interface PipelineOptions extends z.input<typeof pipelineOptionsSchema> {}
export type StepBinding = { step: Step; inputs?: Record<string, string | Binding>; fallback?: StepFallback };

/** One step's cost, attributed to the run's tenant. */
export interface StepCost {
  pipeline: string;
  step: string;
  tenant: string | undefined;
  costUsd: number;
}
