import {
  buildInferRequest,
  type DataType,
  InferResult,
  type InferTransport,
  type InputTensor,
  type TensorInputData,
} from '@infergate/core';
import { isTensor, type PortType, type Tensor } from './port-type.js';
import type { Step } from './step.js';

export interface TensorSpec {
  datatype: DataType;
  /** With the batch dimension when the model batches; `-1` for any size. @default any shape */
  shape?: readonly number[];
}

export interface TritonStepOptions {
  /**
   * How the step reaches Triton: any `InferTransport` — a client's `transport` (or `grpc`), a
   * batcher (`createMicroBatcher`), a router (`createRouter`).
   */
  transport: InferTransport;
  model: string;
  /** @default the server's version policy */
  modelVersion?: string;
  /** The model inputs the step sends, by name. */
  inputs: Readonly<Record<string, TensorSpec>>;
  /** The model outputs the step returns, by name (only these are requested). */
  outputs: Readonly<Record<string, TensorSpec>>;
  /** Triton priority level of the calls. @default the model's default */
  priority?: number;
  /** Price of the GPU behind the model: the step's cost is its call time × this. @default no cost */
  usdPerGpuHour?: number;
}

const port = (spec: TensorSpec): PortType => ({ kind: 'tensor', datatype: spec.datatype, shape: spec.shape });

/** A step that runs one Triton model: pipeline tensors in, the named outputs out. */
export function tritonStep(options: TritonStepOptions): Step {
  const inputs = Object.fromEntries(Object.entries(options.inputs).map(([name, spec]) => [name, port(spec)]));
  const outputs = Object.fromEntries(
    Object.entries(options.outputs).map(([name, spec]) => [name, port(spec)]),
  );
  return {
    kind: 'triton',
    inputs,
    outputs,
    async run(values, context) {
      const tensors: InputTensor[] = Object.keys(options.inputs).map((name) => {
        const value = values[name];
        if (!isTensor(value))
          throw new TypeError(`input '${name}' of model '${options.model}' is not a tensor`);
        return { name, datatype: value.datatype, shape: value.shape, data: value.data };
      });
      const request = buildInferRequest(options.model, tensors, {
        ...(options.modelVersion === undefined ? {} : { modelVersion: options.modelVersion }),
        outputs: Object.keys(options.outputs).map((name) => ({ name })),
      });
      const timeoutMs = context.callTimeoutMs();
      const started = performance.now();
      const response = await options.transport.infer(request, {
        ...(context.signal === undefined ? {} : { signal: context.signal }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(context.tenant === undefined ? {} : { tenant: context.tenant }),
        ...(options.priority === undefined ? {} : { priority: options.priority }),
      });
      const elapsedMs = performance.now() - started;
      const result = new InferResult(response);
      const produced: Record<string, Tensor> = {};
      for (const name of Object.keys(options.outputs)) {
        const output = result.output(name);
        produced[name] = {
          datatype: output.datatype,
          shape: output.shape,
          data: output.data as TensorInputData,
        };
      }
      return {
        outputs: produced,
        ...(options.usdPerGpuHour === undefined
          ? {}
          : { costUsd: (elapsedMs / 3_600_000) * options.usdPerGpuHour }),
      };
    },
  };
}
