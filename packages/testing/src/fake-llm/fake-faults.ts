/**
 * A failure the fake OpenAI / Anthropic servers inject into their next calls. `times` limits how
 * many calls it hits (default: every call until `setFault(undefined)`).
 */
export type FakeLlmFault = (
  | /** 429 with `Retry-After` (and `retry-after-ms` when given). */
  { kind: 'rate-limit'; retryAfter?: string; retryAfterMs?: number } /** A bare 5xx. */
  | {
      kind: 'server-error';
      status?: 500 | 502 | 503 | 504;
    } /** OpenAI: 503 "overloaded"; Anthropic: 529 `overloaded_error`. */
  | { kind: 'overloaded' }
  | { kind: 'unauthorized' }
  | { kind: 'forbidden' }
  | { kind: 'not-found' } /** 400 context-length error in the provider's words. */
  | {
      kind: 'context-length';
    } /** OpenAI: 400 `content_policy_violation`; Anthropic: a reply with stop_reason `refusal`. */
  | { kind: 'content-filter' } /** OpenAI: a normal reply whose finish_reason is `content_filter`. */
  | { kind: 'content-filter-finish' } /** Wait before the status line (a slow first byte). */
  | {
      kind: 'slow-first-byte';
      delayMs: number;
    } /** Destroy the socket after `afterChunks` stream chunks (or before the JSON body). */
  | {
      kind: 'reset-mid-stream';
      afterChunks?: number;
    } /** An SSE frame whose data is not JSON, after `afterChunks` chunks. */
  | { kind: 'malformed-sse'; afterChunks?: number } /** A 200 JSON body that is not JSON. */
  | { kind: 'malformed-json' } /** A 200 JSON body that is JSON but not the provider's shape. */
  | { kind: 'schema-mismatch' } /** A 200 with content-type text/html. */
  | {
      kind: 'wrong-content-type';
    } /** Anthropic: `event: error` (overloaded_error unless `errorType`) after `afterChunks` deltas; OpenAI: an error frame. */
  | { kind: 'stream-error'; afterChunks?: number; errorType?: string }
) & { times?: number };

export type FakeLlmFaultKind = FakeLlmFault['kind'];

/** Holds the active fault and counts how often it fired. */
export class FaultSlot {
  #fault: FakeLlmFault | undefined;
  #left = Number.POSITIVE_INFINITY;
  hits = 0;

  set(fault: FakeLlmFault | undefined): void {
    this.#fault = fault;
    this.#left = fault?.times ?? Number.POSITIVE_INFINITY;
  }

  /** The fault for this call, if any (consumes one of its `times`). */
  take(): FakeLlmFault | undefined {
    if (this.#fault === undefined || this.#left <= 0) return undefined;
    this.#left--;
    this.hits++;
    return this.#fault;
  }
}
