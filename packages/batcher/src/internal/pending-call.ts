import type { CallOptions, InfergateError, InferRequest, InferResponse } from '@infergate/core';
import type { SpanContext } from '@opentelemetry/api';
import type { FairItem } from './fair-queue.js';

/** The calls of one RPC: aborting it once none of them is still waiting for the answer. */
export class SendGroup {
  /**
   * Present only when a member can leave early (it has a signal or a deadline): an RPC whose
   * members all wait for the answer is never aborted, and needs no AbortController.
   */
  readonly controller: AbortController | undefined;
  #live: number;

  constructor(calls: readonly PendingCall[]) {
    this.#live = calls.length;
    let leavable = false;
    for (const call of calls) {
      call.group = this;
      if (call.deadline !== undefined || call.options.signal !== undefined) leavable = true;
    }
    this.controller = leavable ? new AbortController() : undefined;
  }

  #answered = false;

  /** The RPC is over: members leaving no longer matter to it. */
  answered(): void {
    this.#answered = true;
  }

  /** A member got its answer early (cancelled, timed out); the last one cancels the RPC. */
  memberLeft(): void {
    this.#live -= 1;
    if (this.#live === 0 && !this.#answered) this.controller?.abort();
  }
}

/**
 * Where `parkResolvers` leaves a new promise's resolvers for the constructor to take (the executor
 * runs synchronously inside `new Promise`). One shared executor instead of an arrow per call: the
 * arrow and its context were about 100 bytes of every call's garbage.
 */
const parked: {
  resolve: ((response: InferResponse) => void) | undefined;
  reject: ((error: InfergateError) => void) | undefined;
} = { resolve: undefined, reject: undefined };

function parkResolvers(
  resolve: (response: InferResponse) => void,
  reject: (error: InfergateError) => void,
): void {
  parked.resolve = resolve;
  parked.reject = reject;
}

/** One caller's call, from enqueue until it is settled. */
export class PendingCall implements FairItem {
  readonly request: InferRequest;
  readonly options: CallOptions;
  readonly tenant: string;
  readonly rows: number;
  readonly bytes: number;
  readonly enqueuedAt: number;
  /** Absolute time (performance.now()) after which the caller no longer wants an answer. */
  readonly deadline: number | undefined;
  /** The caller's active span at enqueue, linked from the batch span. */
  readonly link: SpanContext | undefined;
  /** What the caller awaits: settled by `fulfil` or `fail`. */
  readonly answer: Promise<InferResponse>;
  state: 'queued' | 'sent' | 'done' = 'queued';
  group: SendGroup | undefined;
  #resolve!: (response: InferResponse) => void;
  #reject!: (error: InfergateError) => void;
  #detach: (() => void) | undefined;

  constructor(
    request: InferRequest,
    options: CallOptions,
    rows: number,
    bytes: number,
    enqueuedAt: number,
    link: SpanContext | undefined,
  ) {
    this.request = request;
    this.options = options;
    this.tenant = options.tenant ?? 'default';
    this.rows = rows;
    this.bytes = bytes;
    this.enqueuedAt = enqueuedAt;
    this.deadline = options.timeoutMs === undefined ? undefined : enqueuedAt + options.timeoutMs;
    this.link = link;
    this.answer = new Promise<InferResponse>(parkResolvers);
    this.#resolve = parked.resolve as (response: InferResponse) => void;
    this.#reject = parked.reject as (error: InfergateError) => void;
    parked.resolve = undefined;
    parked.reject = undefined;
  }

  /** Registers what must be undone when the call settles (abort listener, deadline timer). */
  onSettle(detach: () => void): void {
    this.#detach = detach;
  }

  get settled(): boolean {
    return this.state === 'done';
  }

  fulfil(response: InferResponse): void {
    if (this.#finish()) this.#resolve(response);
  }

  fail(error: InfergateError): void {
    if (this.#finish()) this.#reject(error);
  }

  #finish(): boolean {
    if (this.state === 'done') return false;
    const wasSent = this.state === 'sent';
    this.state = 'done';
    this.#detach?.();
    this.#detach = undefined;
    if (wasSent) this.group?.memberLeft();
    return true;
  }
}
