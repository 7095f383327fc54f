import { decodeTensorData, viewOutputInto } from './codec.js';
import type { DataType } from './datatype.js';
import { ErrorCode, InfergateError } from './errors.js';
import { utf8Text } from './internal/bytes.js';
import type { Parameters } from './parameters.js';
import type { EncodedTensor, TensorOutputData } from './tensor.js';
import type { InferResponse, RequestedOutput } from './transport.js';

/** One output tensor; `data` is decoded on first access, as a view of the received bytes when possible. */
export class OutputTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  /** The wire bytes (for FP16/BF16, the raw 16-bit patterns). */
  readonly raw: Uint8Array;
  readonly parameters: Parameters;
  #data: TensorOutputData | undefined;
  readonly #into: ArrayBufferView | undefined;

  /** `into`: the caller's memory the output was written into (`RequestedOutput.into`), if any. */
  constructor(tensor: EncodedTensor, into?: ArrayBufferView) {
    this.name = tensor.name;
    this.datatype = tensor.datatype;
    this.shape = tensor.shape;
    this.raw = tensor.raw;
    this.parameters = tensor.parameters ?? {};
    this.#into = into;
  }

  /**
   * The natural array: Float32Array for FP32 (and for FP16/BF16, widened), BigInt64Array for INT64,
   * Uint8Array of 0/1 for BOOL, Buffer[] for BYTES (Uint8Array[] where there is no Buffer), …
   * An output requested with `into` is a typed array over that memory instead (`into` itself when it
   * is that array with the output's element count; FP16/BF16 as their Uint16Array bit patterns).
   */
  get data(): TensorOutputData {
    this.#data ??= this.#into === undefined ? decodeTensorData(this) : viewOutputInto(this, this.#into);
    return this.#data;
  }

  /** BYTES elements as UTF-8 strings. */
  strings(): string[] {
    if (this.datatype !== 'BYTES') {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `output '${this.name}' is ${this.datatype}, not BYTES`,
      );
    }
    return (this.data as Uint8Array[]).map(utf8Text);
  }

  /**
   * A plain JavaScript array (numbers, bigints, booleans for BOOL, strings for BYTES): the values,
   * FP16/BF16 widened, also for an output written into `into` (whose `data` is the bit patterns).
   */
  toArray(): Array<number | bigint | boolean | string> {
    if (this.datatype === 'BYTES') return this.strings();
    if (this.datatype === 'BOOL') return Array.from(this.data as Uint8Array, (value) => value !== 0);
    if (this.#into !== undefined && (this.datatype === 'FP16' || this.datatype === 'BF16'))
      return Array.from(decodeTensorData(this) as Float32Array);
    return Array.from(this.data as ArrayLike<number | bigint>);
  }
}

export class InferResult {
  readonly model: string;
  readonly modelVersion: string;
  readonly id: string;
  readonly parameters: Parameters;
  readonly outputs: readonly OutputTensor[];

  /** `requested`: the request's outputs, whose `into` memory the response's outputs were written into. */
  constructor(response: InferResponse, requested?: readonly RequestedOutput[]) {
    this.model = response.model;
    this.modelVersion = response.modelVersion;
    this.id = response.id;
    this.parameters = response.parameters;
    this.outputs =
      requested === undefined
        ? response.outputs.map((tensor) => new OutputTensor(tensor))
        : response.outputs.map(
            (tensor) =>
              new OutputTensor(tensor, requested.find((output) => output.name === tensor.name)?.into),
          );
  }

  /** The output called `name`; NOT_FOUND naming the outputs there are if it is missing. */
  output(name: string): OutputTensor {
    const found = this.outputs.find((tensor) => tensor.name === name);
    if (found === undefined) {
      const names = this.outputs.map((tensor) => tensor.name).join(', ') || 'none';
      throw new InfergateError(
        ErrorCode.NotFound,
        `model '${this.model}' returned no output '${name}' (outputs: ${names})`,
      );
    }
    return found;
  }
}
