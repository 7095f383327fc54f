import type { Parameters } from '@infergate/core';
import type { SequenceContext } from './model-definition.js';
import { invalidArgument } from './rpc-error.js';

function flag(parameters: Parameters, name: string): boolean {
  const value = parameters[name];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    throw invalidArgument(`invalid value type for '${name}' parameter, expected bool_param.`);
  }
  return value;
}

function correlationId(parameters: Parameters): number | bigint | string {
  const value = parameters.sequence_id;
  if (value === undefined) return 0;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string') return value;
  if (typeof value === 'object' && value.kind !== 'double') return value.value;
  throw invalidArgument(
    "invalid value type for 'sequence_id' parameter, expected int64_param or string_param.",
  );
}

/**
 * The sequence batcher's bookkeeping (triton-inference-server/core sequence_batch_scheduler.cc): which
 * sequences are active per model, and the implicit state each one carries between requests.
 */
export class SequenceBook {
  readonly #active = new Map<string, Map<string, Record<string, unknown>>>();

  /** Validates a request's sequence parameters and returns its sequence (starting it if asked). */
  begin(model: string, parameters: Parameters): SequenceContext {
    const id = correlationId(parameters);
    const start = flag(parameters, 'sequence_start');
    const end = flag(parameters, 'sequence_end');
    if (id === 0 || id === 0n || id === '') {
      throw invalidArgument(
        `inference request to model '${model}' must specify a non-zero or non-empty correlation ID`,
      );
    }
    let sequences = this.#active.get(model);
    if (sequences === undefined) {
      sequences = new Map();
      this.#active.set(model, sequences);
    }
    const key = `${typeof id}:${String(id)}`;
    let state = sequences.get(key);
    if (start || state === undefined) {
      if (!start) {
        throw invalidArgument(
          `inference request for sequence ${String(id)} to model '${model}' must specify the START flag ` +
            'on the first request of the sequence',
        );
      }
      state = {};
      sequences.set(key, state);
    }
    return { id, start, end, state };
  }

  /** Frees the sequence's state once its END request has run (or failed). */
  finish(model: string, sequence: SequenceContext): void {
    if (sequence.end) this.#active.get(model)?.delete(`${typeof sequence.id}:${String(sequence.id)}`);
  }

  /** How many sequences of `model` are active. */
  active(model: string): number {
    return this.#active.get(model)?.size ?? 0;
  }

  reset(): void {
    this.#active.clear();
  }
}
