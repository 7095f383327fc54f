import { randomBytes } from 'node:crypto';
import { ErrorCode, InfergateError } from './errors.js';
import { buildInferRequest, type InferOptions } from './infer-request.js';
import { InferResult } from './result.js';
import type { InputTensor } from './tensor.js';
import type { InferTransport } from './transport.js';

export interface SequenceOptions {
  /** The correlation id; default: a random positive safe integer. */
  id?: number | bigint | string;
}

/** A random positive safe integer, so ids from many processes rarely meet. */
export function newSequenceId(): number {
  return randomBytes(6).readUIntBE(0, 6) + 1;
}

type SequenceCallOptions = Omit<InferOptions, 'sequenceId' | 'sequenceStart' | 'sequenceEnd'>;

/**
 * A stateful model's sequence: allocates the correlation id, marks the first request as START and
 * `end()` as END, and sends every request through one endpoint so the state it builds is found.
 */
export class Sequence {
  readonly model: string;
  readonly id: number | bigint | string;
  readonly #transport: InferTransport;
  readonly #release: () => Promise<void>;
  #started = false;
  #ended = false;

  constructor(
    model: string,
    transport: InferTransport,
    release: () => Promise<void>,
    options: SequenceOptions = {},
  ) {
    this.model = model;
    this.#transport = transport;
    this.#release = release;
    this.id = options.id ?? newSequenceId();
  }

  get ended(): boolean {
    return this.#ended;
  }

  private async send(
    inputs: readonly InputTensor[],
    options: SequenceCallOptions,
    end: boolean,
  ): Promise<InferResult> {
    if (this.#ended) {
      throw new InfergateError(
        ErrorCode.FailedPrecondition,
        `sequence ${String(this.id)} of '${this.model}' has ended`,
      );
    }
    const start = !this.#started;
    const request = buildInferRequest(this.model, inputs, {
      ...options,
      sequenceId: this.id,
      sequenceStart: start,
      sequenceEnd: end,
    });
    this.#started = true;
    if (end) this.#ended = true;
    try {
      return new InferResult(await this.#transport.infer(request, options));
    } finally {
      if (end) await this.#release();
    }
  }

  /** Sends the next request of the sequence (the first one carries START). */
  infer(inputs: readonly InputTensor[], options: SequenceCallOptions = {}): Promise<InferResult> {
    return this.send(inputs, options, false);
  }

  /** Sends the last request of the sequence (END); the server frees the sequence's state. */
  end(inputs: readonly InputTensor[], options: SequenceCallOptions = {}): Promise<InferResult> {
    return this.send(inputs, options, true);
  }
}
