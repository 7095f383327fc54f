import { ErrorCode, InfergateError, type InputTensor, type Parameters, param } from '@infergate/core';
import type { ChatRequest } from './types.js';

/**
 * How sampling settings reach a Triton LLM model:
 * - `'tensors'`: TensorRT-LLM's ensemble / tensorrt_llm_bls: `max_tokens` INT32, `temperature` FP32,
 *   `stop_words` BYTES [-1] inputs.
 * - `'sampling-parameters'`: the vLLM backend's `sampling_parameters` BYTES input holding JSON
 *   (`{"max_tokens": …, "temperature": …, "stop": [...]}`).
 * - `'parameters'`: request parameters (`max_tokens` int64, `temperature` double, `stop` string),
 *   which the vLLM backend reads when `sampling_parameters` is absent. One stop word at most.
 */
export type SamplingStyle = 'tensors' | 'sampling-parameters' | 'parameters';

export interface TritonInputSettings {
  inputName: string;
  outputName: string;
  /** Prefix every shape with a batch dimension of 1 (models with max_batch_size > 0). */
  batchDimension: boolean;
  samplingStyle: SamplingStyle;
  /** Send `exclude_input_in_output` = true, so that the prompt is not echoed back. */
  excludeInputInOutput: boolean;
  /** Send `return_num_input_tokens` / `return_num_output_tokens` = true. */
  returnTokenCounts: boolean;
  /** Send `return_finish_reason` = true (vLLM backend r24.12+). */
  returnFinishReason: boolean;
}

export interface TritonInputs {
  inputs: InputTensor[];
  parameters: Parameters;
  /** The outputs to ask for: the text, plus the counts and finish reason when enabled. */
  outputs: string[];
}

function scalarParameters(
  values: Readonly<Record<string, unknown>> | undefined,
): Record<string, string | number | boolean> {
  const entries: [string, string | number | boolean][] = [];
  for (const [name, value] of Object.entries(values ?? {})) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      entries.push([name, value]);
    else {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `triton: providerOptions.${name} must be a string, number or boolean to travel as a request parameter`,
      );
    }
  }
  // Own entries, whatever the name: assigning `out['__proto__']` would set the prototype and drop it.
  return Object.fromEntries(entries);
}

/** The request tensors and parameters of one chat call, following the text_input/text_output convention. */
export function buildTritonInputs(
  settings: TritonInputSettings,
  prompt: string,
  request: ChatRequest,
  stream: boolean,
): TritonInputs {
  const shape = (dims: readonly number[]) => (settings.batchDimension ? [1, ...dims] : [...dims]);
  const bool = (name: string, value: boolean): InputTensor => ({
    name,
    datatype: 'BOOL',
    shape: shape([1]),
    data: [value],
  });
  const inputs: InputTensor[] = [
    { name: settings.inputName, datatype: 'BYTES', shape: shape([1]), data: [prompt] },
  ];
  const stop = request.stop ?? [];
  let parameters: Record<string, Parameters[string]> = {};
  switch (settings.samplingStyle) {
    case 'tensors':
      if (request.maxTokens !== undefined) {
        inputs.push({ name: 'max_tokens', datatype: 'INT32', shape: shape([1]), data: [request.maxTokens] });
      }
      if (request.temperature !== undefined) {
        inputs.push({
          name: 'temperature',
          datatype: 'FP32',
          shape: shape([1]),
          data: [request.temperature],
        });
      }
      if (stop.length > 0) {
        inputs.push({ name: 'stop_words', datatype: 'BYTES', shape: shape([stop.length]), data: [...stop] });
      }
      parameters = scalarParameters(request.providerOptions);
      break;
    case 'sampling-parameters': {
      const sampling: Record<string, unknown> = { ...request.providerOptions };
      if (request.maxTokens !== undefined) sampling.max_tokens = request.maxTokens;
      if (request.temperature !== undefined) sampling.temperature = request.temperature;
      if (stop.length > 0) sampling.stop = [...stop];
      inputs.push({
        name: 'sampling_parameters',
        datatype: 'BYTES',
        shape: shape([1]),
        data: [JSON.stringify(sampling)],
      });
      break;
    }
    case 'parameters':
      parameters = scalarParameters(request.providerOptions);
      if (request.maxTokens !== undefined) parameters.max_tokens = request.maxTokens;
      if (request.temperature !== undefined) parameters.temperature = param.double(request.temperature);
      if (stop.length > 1) {
        throw new InfergateError(
          ErrorCode.InvalidArgument,
          "triton: request parameters carry one stop word; use samplingStyle 'sampling-parameters' for more",
        );
      }
      if (stop.length === 1) parameters.stop = stop[0] as string;
      break;
  }
  inputs.push(bool('stream', stream));
  if (settings.excludeInputInOutput) inputs.push(bool('exclude_input_in_output', true));
  if (settings.returnTokenCounts) {
    inputs.push(bool('return_num_input_tokens', true), bool('return_num_output_tokens', true));
  }
  const outputs = [settings.outputName];
  if (settings.returnTokenCounts) outputs.push('num_input_tokens', 'num_output_tokens');
  if (settings.returnFinishReason) {
    inputs.push(bool('return_finish_reason', true));
    outputs.push('finish_reason');
  }
  return { inputs, parameters, outputs };
}
