import {
  decodeTensorData,
  type EncodedTensor,
  ErrorCode,
  InfergateError,
  type InferResponse,
} from '@infergate/core';
import type { ChatUsage, FinishReason } from '../types.js';
import { unknownUsage } from '../usage.js';

/**
 * `'delta'`: each response carries only the new text (the vLLM backend since it tracks
 * `prev_lens_text_output`; TensorRT-LLM when streaming). `'cumulative'`: each response repeats the
 * whole text so far (older vLLM backends, some BLS models); the adapter emits the new suffix.
 */
export type TextOutputMode = 'delta' | 'cumulative';

function firstNumber(tensor: EncodedTensor | undefined): number | undefined {
  if (tensor === undefined || tensor.raw.byteLength === 0) return undefined;
  const data = decodeTensorData(tensor) as ArrayLike<number | bigint>;
  const value = data[0];
  return value === undefined ? undefined : Number(value);
}

function firstString(tensor: EncodedTensor | undefined, what: string): string | undefined {
  if (tensor === undefined) return undefined;
  if (tensor.datatype !== 'BYTES') {
    throw new InfergateError(ErrorCode.DataLoss, `triton: output '${what}' is ${tensor.datatype}, not BYTES`);
  }
  const elements = decodeTensorData(tensor) as Buffer[];
  return elements[0]?.toString('utf8');
}

export function tritonFinishReason(raw: string | undefined): FinishReason | undefined {
  switch (raw) {
    case 'stop':
    case 'eos':
      return 'stop';
    case 'length':
      return 'length';
    case 'abort':
      return 'other';
    default:
      return undefined;
  }
}

/** Folds a decoupled model's responses into text deltas, token counts and a finish reason. */
export class TritonOutputReader {
  readonly #outputName: string;
  readonly #mode: TextOutputMode;
  #text = '';
  #inputTokens: number | undefined;
  #outputTokens: number | undefined;
  #rawFinishReason: string | undefined;
  #raw: Record<string, number> = {};
  id = '';
  model = '';

  constructor(outputName: string, mode: TextOutputMode) {
    this.#outputName = outputName;
    this.#mode = mode;
  }

  /** Reads one response; returns the new text it carries ('' when none). */
  read(response: InferResponse): string {
    if (response.id !== '') this.id = response.id;
    if (response.model !== '') this.model = response.model;
    const byName = new Map(response.outputs.map((tensor) => [tensor.name, tensor]));
    const inputTokens = firstNumber(byName.get('num_input_tokens'));
    if (inputTokens !== undefined) this.#inputTokens = this.#raw.num_input_tokens = inputTokens;
    const outputTokens = firstNumber(byName.get('num_output_tokens'));
    if (outputTokens !== undefined) {
      this.#outputTokens =
        this.#mode === 'delta'
          ? (this.#outputTokens ?? 0) + outputTokens
          : Math.max(this.#outputTokens ?? 0, outputTokens);
      this.#raw.num_output_tokens = this.#outputTokens;
    }
    const finish = firstString(byName.get('finish_reason'), 'finish_reason');
    if (finish !== undefined && finish !== '' && finish !== 'None') this.#rawFinishReason = finish;
    const text = firstString(byName.get(this.#outputName), this.#outputName);
    if (text === undefined || text === '') return '';
    if (this.#mode === 'delta') {
      this.#text += text;
      return text;
    }
    // Cumulative: emit what goes past the text already sent (a changed tail cannot be taken back).
    let common = 0;
    const limit = Math.min(text.length, this.#text.length);
    while (common < limit && text.charCodeAt(common) === this.#text.charCodeAt(common)) common++;
    const delta = text.slice(Math.max(common, this.#text.length));
    this.#text = text.length >= this.#text.length ? text : this.#text;
    return delta;
  }

  get text(): string {
    return this.#text;
  }

  get rawFinishReason(): string | undefined {
    return this.#rawFinishReason;
  }

  /** The model's own finish reason when it sent one; else 'length' when the count hit maxTokens. */
  finishReason(maxTokens: number | undefined): FinishReason {
    const known = tritonFinishReason(this.#rawFinishReason);
    if (known !== undefined) return known;
    if (this.#rawFinishReason !== undefined) return 'other';
    if (maxTokens !== undefined && this.#outputTokens !== undefined && this.#outputTokens >= maxTokens)
      return 'length';
    return 'stop';
  }

  usage(): ChatUsage {
    if (this.#inputTokens === undefined && this.#outputTokens === undefined) return unknownUsage();
    return {
      ...unknownUsage({ ...this.#raw }),
      inputTokens: this.#inputTokens,
      outputTokens: this.#outputTokens,
    };
  }
}
