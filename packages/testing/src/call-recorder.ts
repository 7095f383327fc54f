import type { Metadata } from '@grpc/grpc-js';
import { ENCODING_KEY } from './internal/request-encoding.js';

/** One RPC as the server received it. */
export interface RecordedCall {
  /** The RPC's name as in the service: 'ModelInfer', 'ServerLive', … */
  method: string;
  /** The model the request names, when it names one. */
  model: string | undefined;
  /**
   * Request metadata; binary (`-bin`) values as base64. `traceparent` shows up here, and
   * `grpc-encoding` ('gzip', 'deflate') when the request message was compressed.
   */
  metadata: Record<string, string>;
  /** When it arrived (ms since the epoch). */
  time: number;
}

export function metadataToRecord(metadata: Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(metadata.getMap())) {
    const name = key === ENCODING_KEY ? 'grpc-encoding' : key;
    out[name] = typeof values === 'string' ? values : Buffer.from(values).toString('base64');
  }
  return out;
}

/** A ring buffer of the last `capacity` calls. */
export class CallRecorder {
  readonly #capacity: number;
  readonly #buffer: RecordedCall[] = [];
  #next = 0;

  constructor(capacity = 1000) {
    this.#capacity = capacity;
  }

  record(call: RecordedCall): void {
    if (this.#buffer.length < this.#capacity) this.#buffer.push(call);
    else this.#buffer[this.#next] = call;
    this.#next = (this.#next + 1) % this.#capacity;
  }

  /** The recorded calls, oldest first (a copy). */
  list(): RecordedCall[] {
    if (this.#buffer.length < this.#capacity) return [...this.#buffer];
    return [...this.#buffer.slice(this.#next), ...this.#buffer.slice(0, this.#next)];
  }

  clear(): void {
    this.#buffer.length = 0;
    this.#next = 0;
  }
}
