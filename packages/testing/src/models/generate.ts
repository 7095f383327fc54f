import { integerParameter } from '../internal/parameters.js';
import { sleep } from '../internal/sleep.js';
import type { ExecuteOutput, ExecuteRequest, ModelDefinition, TensorSpec } from '../model-definition.js';
import { RpcError } from '../rpc-error.js';

export interface GenerateModelOptions {
  /** @default 'generate' */
  name?: string;
  /** Above 0, every input and output carries a batch dimension (as TensorRT-LLM's ensemble). @default 0 */
  maxBatchSize?: number;
  /** Words generated when the request sets no max_tokens (vLLM's SamplingParams default). @default 16 */
  defaultMaxTokens?: number;
}

const bool = (name: string): TensorSpec => ({ name, datatype: 'BOOL', dims: [1], optional: true });

function flag(request: ExecuteRequest, name: string): boolean | undefined {
  const input = request.inputs.find((candidate) => candidate.name === name);
  if (input === undefined) return undefined;
  return (input.data as Uint8Array)[0] === 1;
}

function strings(request: ExecuteRequest, name: string): string[] | undefined {
  const input = request.inputs.find((candidate) => candidate.name === name);
  return input === undefined
    ? undefined
    : (input.data as Buffer[]).map((element) => element.toString('utf8'));
}

interface Sampling {
  maxTokens: number;
  stop: string[];
}

/** max_tokens / stop from the `sampling_parameters` JSON, else the tensors, else request parameters. */
function sampling(request: ExecuteRequest, defaultMaxTokens: number): Sampling {
  const json = strings(request, 'sampling_parameters')?.[0];
  if (json !== undefined) {
    let parsed: { max_tokens?: unknown; stop?: unknown };
    try {
      parsed = JSON.parse(json) as typeof parsed;
    } catch {
      throw new RpcError('INVALID_ARGUMENT', 'generate: sampling_parameters is not JSON');
    }
    const stop = parsed.stop;
    return {
      maxTokens: typeof parsed.max_tokens === 'number' ? parsed.max_tokens : defaultMaxTokens,
      stop: Array.isArray(stop) ? stop.map(String) : typeof stop === 'string' ? [stop] : [],
    };
  }
  const tensor = request.inputs.find((candidate) => candidate.name === 'max_tokens');
  const fromTensor = tensor === undefined ? undefined : (tensor.data as Int32Array)[0];
  const fromParameter = integerParameter(request.parameters, 'max_tokens');
  const stopParameter = request.parameters.stop;
  return {
    maxTokens: fromTensor ?? fromParameter ?? defaultMaxTokens,
    stop: strings(request, 'stop_words') ?? (typeof stopParameter === 'string' ? [stopParameter] : []),
  };
}

/**
 * `generate`: a decoupled LLM stand-in with the text_input/text_output convention of Triton's vLLM
 * and TensorRT-LLM backends. The reply echoes the words of `text_input`, cut before the first stop
 * word and after `max_tokens` words (default 16); a word counts as a token.
 *
 * Inputs: `text_input` BYTES [1]; optional `stream`, `exclude_input_in_output`,
 * `return_num_input_tokens`, `return_num_output_tokens`, `return_finish_reason` BOOL [1];
 * `max_tokens` INT32 [1], `temperature` FP32 [1] (ignored), `stop_words` BYTES [-1],
 * `sampling_parameters` BYTES [1] (vLLM's JSON). Request parameters `max_tokens` and `stop` are read
 * when the tensors are absent; `delay_ms` waits before each response.
 *
 * Streaming (`stream` true): one response per word, `text_output` holding the new text only (" word"
 * after the first), as the vLLM backend sends deltas. Otherwise one response with the whole reply,
 * preceded by the prompt unless `exclude_input_in_output` is true (vLLM's default). Outputs on
 * request: `num_input_tokens` UINT32 [1], `num_output_tokens` UINT32 [1] (this response's words),
 * `finish_reason` BYTES [1] ("None" until the last response, then "stop" or "length").
 */
export function generateModel(options: GenerateModelOptions = {}): ModelDefinition {
  const maxBatchSize = options.maxBatchSize ?? 0;
  const defaultMaxTokens = options.defaultMaxTokens ?? 16;
  const batched = maxBatchSize > 0;
  const shape = (dims: number[]) => (batched ? [1, ...dims] : dims);
  return {
    name: options.name ?? 'generate',
    decoupled: true,
    maxBatchSize,
    inputs: [
      { name: 'text_input', datatype: 'BYTES', dims: [1] },
      bool('stream'),
      bool('exclude_input_in_output'),
      bool('return_num_input_tokens'),
      bool('return_num_output_tokens'),
      bool('return_finish_reason'),
      { name: 'max_tokens', datatype: 'INT32', dims: [1], optional: true },
      { name: 'temperature', datatype: 'FP32', dims: [1], optional: true },
      { name: 'stop_words', datatype: 'BYTES', dims: [-1], optional: true },
      { name: 'sampling_parameters', datatype: 'BYTES', dims: [1], optional: true },
    ],
    outputs: [
      { name: 'text_output', datatype: 'BYTES', dims: [-1] },
      { name: 'num_input_tokens', datatype: 'UINT32', dims: [1] },
      { name: 'num_output_tokens', datatype: 'UINT32', dims: [1] },
      { name: 'finish_reason', datatype: 'BYTES', dims: [-1] },
    ],
    config: { modelTransactionPolicy: { decoupled: true } },
    async *executeStream(request, { signal }) {
      if (request.batchSize > 1) throw new RpcError('INVALID_ARGUMENT', 'generate: one prompt per request');
      const prompt = strings(request, 'text_input')?.[0] ?? '';
      const stream = flag(request, 'stream') === true;
      const exclude = flag(request, 'exclude_input_in_output');
      if (stream && exclude === false) {
        throw new RpcError(
          'INVALID_ARGUMENT',
          'When streaming, `exclude_input_in_output` = False is not allowed.',
        );
      }
      const { maxTokens, stop } = sampling(request, defaultMaxTokens);
      let words = prompt.split(/\s+/).filter((word) => word !== '');
      const inputTokens = words.length;
      const stopAt = words.findIndex((word) => stop.includes(word));
      if (stopAt !== -1) words = words.slice(0, stopAt);
      const finish = words.length > maxTokens ? 'length' : 'stop';
      words = words.slice(0, Math.max(0, maxTokens));
      const delayMs = integerParameter(request.parameters, 'delay_ms') ?? 0;
      const counts = flag(request, 'return_num_output_tokens') === true;
      const inputCount = flag(request, 'return_num_input_tokens') === true;
      const finishReason = flag(request, 'return_finish_reason') === true;
      const response = (text: string, tokens: number, last: boolean): ExecuteOutput[] => {
        const outputs: ExecuteOutput[] = [
          { name: 'text_output', datatype: 'BYTES', shape: shape([1]), data: [text] },
        ];
        if (inputCount)
          outputs.push({
            name: 'num_input_tokens',
            datatype: 'UINT32',
            shape: shape([1]),
            data: [inputTokens],
          });
        if (counts)
          outputs.push({ name: 'num_output_tokens', datatype: 'UINT32', shape: shape([1]), data: [tokens] });
        if (finishReason) {
          outputs.push({
            name: 'finish_reason',
            datatype: 'BYTES',
            shape: shape([1]),
            data: [last ? finish : 'None'],
          });
        }
        return outputs;
      };
      if (!stream) {
        await sleep(delayMs, signal);
        const reply = words.join(' ');
        yield response(exclude === true ? reply : `${prompt}${reply}`, words.length, true);
        return;
      }
      if (words.length === 0) {
        yield response('', 0, true);
        return;
      }
      for (let index = 0; index < words.length; index++) {
        await sleep(delayMs, signal);
        yield response(
          index === 0 ? (words[0] as string) : ` ${words[index]}`,
          1,
          index === words.length - 1,
        );
      }
    },
  };
}
