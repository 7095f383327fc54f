// @infergate/pipeline: see README.md. Public exports are listed here explicitly.
export type { Binding } from './internal/pipeline-graph.js';
export type { ChatModelLike, LlmStepOptions } from './llm-step.js';
export { llmStep } from './llm-step.js';
export type { PipelineResult, PipelineRunOptions, StepReport, StepStatus } from './pipeline.js';
export { createPipeline, Pipeline } from './pipeline.js';
export type { PipelineOptions, StepBinding, StepCost, StepFallback } from './pipeline-options.js';
export { pipelineOptionsSchema } from './pipeline-options.js';
export type { PortType, Tensor } from './port-type.js';
export { describePort, portMismatch } from './port-type.js';
export type { Step, StepContext, StepOutcome } from './step.js';
export { functionStep } from './step.js';
export type { TensorSpec, TritonStepOptions } from './triton-step.js';
export { tritonStep } from './triton-step.js';
export { VERSION } from './version.js';
