import type { InferRequest, ParameterValue } from '@infergate/core';

/** The sequence facts of a request to a stateful Triton model. */
export interface SequenceFlags {
  /** The correlation id as a map key. */
  key: string;
  start: boolean;
  end: boolean;
}

function idKey(value: ParameterValue | undefined): string | undefined {
  if (value === undefined || value === 0 || value === '' || value === false) return undefined;
  if (typeof value === 'object') return String(value.value);
  return String(value);
}

/** Reads `sequence_id` / `sequence_start` / `sequence_end`; undefined when not a sequence request. */
export function sequenceOf(request: InferRequest): SequenceFlags | undefined {
  const parameters = request.parameters;
  if (parameters === undefined) return undefined;
  const key = idKey(parameters.sequence_id);
  if (key === undefined) return undefined;
  return {
    key: `${request.model}\u0000${key}`,
    start: parameters.sequence_start === true,
    end: parameters.sequence_end === true,
  };
}

/**
 * Which target each live sequence is pinned to: set at START, released at END or when the sequence
 * breaks. Bounded: past `limit` the oldest pin is dropped (Triton frees idle sequences anyway).
 */
export class SequencePins {
  readonly #pins = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 100_000) {
    this.#limit = limit;
  }

  get size(): number {
    return this.#pins.size;
  }

  get(key: string): string | undefined {
    return this.#pins.get(key);
  }

  pin(key: string, target: string): void {
    this.#pins.delete(key);
    this.#pins.set(key, target);
    if (this.#pins.size > this.#limit) {
      const oldest = this.#pins.keys().next();
      if (oldest.done !== true) this.#pins.delete(oldest.value);
    }
  }

  release(key: string): void {
    this.#pins.delete(key);
  }
}
