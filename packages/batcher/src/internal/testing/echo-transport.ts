// Test double (not exported): an in-memory InferTransport that answers each request with its own
// inputs as outputs, records every call, and can hold answers back or fail chosen requests.
import {
  abortError,
  type CallOptions,
  type DataType,
  type EncodedTensor,
  encodeBytesElements,
  type InferRequest,
  type InferResponse,
  type InferTransport,
} from '@infergate/core';

export interface RecordedRpc {
  request: InferRequest;
  options: CallOptions;
  /** Rows of the first input. */
  rows: number;
}

export interface EchoTransportOptions {
  /** Answer later: each call waits until `release()` (or for the returned promise). */
  hold?: boolean;
  /** Fail a request by returning an error for it. */
  fail?: (request: InferRequest) => Error | undefined;
  /** Rewrite the response before it is sent (to break it). */
  mapResponse?: (response: InferResponse) => InferResponse;
}

export class EchoTransport implements InferTransport {
  readonly calls: RecordedRpc[] = [];
  readonly #options: EchoTransportOptions;
  readonly #held: (() => void)[] = [];
  streams = 0;

  constructor(options: EchoTransportOptions = {}) {
    this.#options = options;
  }

  /** Calls whose answer is being held. */
  get held(): number {
    return this.#held.length;
  }

  /** Lets the oldest `count` held calls answer (all by default). */
  release(count = this.#held.length): void {
    for (const resume of this.#held.splice(0, count)) resume();
  }

  async infer(request: InferRequest, options: CallOptions): Promise<InferResponse> {
    this.calls.push({ request, options, rows: request.inputs[0]?.shape[0] ?? 0 });
    const { signal } = options;
    if (this.#options.hold) {
      await new Promise<void>((resolve, reject) => {
        const resume = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          this.#held.splice(this.#held.indexOf(resume), 1);
          reject(abortError(signal as AbortSignal));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.#held.push(resume);
      });
    } else await Promise.resolve();
    if (signal?.aborted) throw abortError(signal);
    const failure = this.#options.fail?.(request);
    if (failure !== undefined) throw failure;
    const response: InferResponse = {
      model: request.model,
      modelVersion: request.modelVersion ?? '1',
      id: request.id ?? '',
      outputs: request.inputs.map((input) => ({ ...input })),
      parameters: {},
    };
    return this.#options.mapResponse ? this.#options.mapResponse(response) : response;
  }

  async *stream(request: InferRequest, options: CallOptions): AsyncIterable<InferResponse> {
    this.streams += 1;
    yield await this.infer(request, options);
  }
}

/** An FP32 tensor of `rows` × `columns` whose values encode (seed, row, column). */
export function fp32(name: string, rows: number, columns: number, seed: number): EncodedTensor {
  const values = new Float32Array(rows * columns);
  for (let i = 0; i < values.length; i++) values[i] = seed * 1000 + i;
  return { name, datatype: 'FP32', shape: [rows, columns], raw: new Uint8Array(values.buffer) };
}

/** A BYTES tensor of `rows` rows of one string each. */
export function bytesTensor(name: string, strings: readonly string[]): EncodedTensor {
  return {
    name,
    datatype: 'BYTES' as DataType,
    shape: [strings.length, 1],
    raw: encodeBytesElements(strings),
  };
}

/** A request for `model` with the given inputs. */
export function requestOf(model: string, ...inputs: EncodedTensor[]): InferRequest {
  return { model, inputs };
}

/** The first FP32 output's values. */
export function fp32Values(response: InferResponse, index = 0): number[] {
  const raw = (response.outputs[index] as EncodedTensor).raw;
  return Array.from(new Float32Array(raw.slice().buffer));
}
