import { abortError, ErrorCode, InfergateError } from './errors.js';
import type { ModelStreamInferResponse } from './gen/grpc_service_pb.js';
import type { GrpcTransport, StreamCall } from './grpc-transport.js';
import { buildInferRequest, type InferOptions } from './infer-request.js';
import type * as GrpcWire from './internal/grpc-wire.js';
import { loadedGrpcWire } from './internal/lazy-modules.js';
import { classifyStreamError } from './internal/triton-messages.js';
import type { Parameters } from './parameters.js';
import { InferResult } from './result.js';
import type { InputTensor } from './tensor.js';
import type { CallOptions, InferRequest } from './transport.js';

/** Responses buffered for readers before the session stops reading from the server. */
const HIGH_WATER = 256;

interface Pending {
  id: string;
  model: string;
  bound: ReadonlyMap<string, Parameters>;
  queue: InferResult[];
  error: InfergateError | undefined;
  done: boolean;
  wake: (() => void) | undefined;
}

const REQUEST_ID_IN_TEXT = /\[request id: ([^\]]+)\]/;

/**
 * One ModelStreamInfer call carrying many requests. Each `infer()` returns its own responses,
 * matched by request id; an error on one request ends only that request.
 */
export class StreamSession {
  readonly #grpc: GrpcTransport;
  readonly #options: CallOptions;
  readonly #pending = new Map<string, Pending>();
  #stream: StreamCall | undefined;
  #sequence = 0;
  #buffered = 0;
  #failure: InfergateError | undefined;
  #closing = false;
  #ended: Promise<void> | undefined;
  /**
   * Requests made before the first call of the process loaded grpc-wire.ts (lazy-modules.ts): they
   * are written, in order, once it has; `close` waits for them.
   */
  #opening: Promise<unknown> | undefined;
  #waitingWrites = 0;

  constructor(grpc: GrpcTransport, options: CallOptions = {}) {
    this.#grpc = grpc;
    this.#options = options;
  }

  /** Requests still waiting for their final response. */
  get pending(): number {
    return this.#pending.size;
  }

  /** The session's stream, opened with `options` (the session's, less the time its first write waited). */
  private open(options: CallOptions = this.#options): StreamCall {
    if (this.#stream) return this.#stream;
    const stream = this.#grpc.openStreamCall(options);
    this.#stream = stream;
    this.#ended = new Promise<void>((resolve) => {
      stream.call.on('data', (message: ModelStreamInferResponse) => this.onMessage(message));
      stream.call.on('error', (error) => {
        this.fail(this.#grpc.streamError(error, this.#options.signal, { endpoint: this.#grpc.address }));
        resolve();
      });
      stream.call.on('end', () => {
        this.fail(
          new InfergateError(ErrorCode.Unavailable, 'the server ended the stream', {
            endpoint: this.#grpc.address,
          }),
        );
        resolve();
      });
    });
    return stream;
  }

  private route(message: ModelStreamInferResponse): Pending | undefined {
    const id = message.inferResponse?.id || REQUEST_ID_IN_TEXT.exec(message.errorMessage)?.[1];
    if (id !== undefined && this.#pending.has(id)) return this.#pending.get(id);
    // No usable id: the oldest request is the one the server answered first.
    return this.#pending.values().next().value;
  }

  private onMessage(message: ModelStreamInferResponse): void {
    const pending = this.route(message);
    if (pending === undefined) return;
    if (message.errorMessage !== '') {
      this.finish(
        pending,
        classifyStreamError(message.errorMessage, {
          endpoint: this.#grpc.address,
          model: pending.model,
          requestId: pending.id,
        }),
      );
      return;
    }
    if (message.inferResponse === undefined) return;
    let response: ReturnType<typeof GrpcWire.fromModelInferResponse>;
    try {
      // Messages only arrive on a stream opened after grpc-wire.ts loaded.
      response = (loadedGrpcWire() as typeof GrpcWire).fromModelInferResponse(
        message.inferResponse,
        pending.bound,
      );
    } catch (error) {
      this.finish(pending, InfergateError.from(error));
      return;
    }
    const final = response.parameters.triton_final_response === true;
    if (response.outputs.length > 0 || !final) {
      pending.queue.push(new InferResult(response));
      this.#buffered++;
      if (this.#buffered >= HIGH_WATER) this.#stream?.call.pause();
    }
    if (final) this.finish(pending);
    else pending.wake?.();
  }

  private finish(pending: Pending, error?: InfergateError): void {
    pending.done = true;
    pending.error = error;
    this.#pending.delete(pending.id);
    pending.wake?.();
    if (this.#pending.size === 0 && this.#closing) this.#stream?.call.end();
  }

  private fail(error: InfergateError): void {
    this.#failure ??= error;
    for (const pending of [...this.#pending.values()]) this.finish(pending, this.#failure);
    this.#stream?.end(this.#closing ? undefined : this.#failure);
  }

  /** Sends one request on the session and iterates its responses (0..N for decoupled models). */
  infer(
    model: string,
    inputs: readonly InputTensor[],
    options: Omit<InferOptions, keyof CallOptions> = {},
  ): AsyncIterable<InferResult> {
    if (this.#closing)
      throw new InfergateError(ErrorCode.FailedPrecondition, 'the stream session is closing');
    if (this.#failure) throw this.#failure;
    const signal = this.#options.signal;
    if (signal?.aborted) throw abortError(signal);
    const id = options.requestId ?? `infergate-${++this.#sequence}`;
    if (this.#pending.has(id))
      throw new InfergateError(ErrorCode.InvalidArgument, `request id '${id}' is already in flight`);
    const request = buildInferRequest(model, inputs, { ...options, requestId: id });
    const bytes = this.#grpc.encodeStreamRequest(request, this.#options);
    const wire = loadedGrpcWire();
    const pending: Pending = {
      id,
      model,
      bound: wire ? wire.sharedMemoryOutputs(request) : new Map(),
      queue: [],
      error: undefined,
      done: false,
      wake: undefined,
    };
    this.#pending.set(id, pending);
    if (wire && this.#opening === undefined) this.open().call.write(bytes);
    else this.writeOnceLoaded(pending, request, bytes);
    return this.iterate(pending);
  }

  private writeOnceLoaded(pending: Pending, request: InferRequest, bytes: Buffer): void {
    this.#waitingWrites++;
    this.#opening = (this.#opening ?? Promise.resolve())
      // Within the session's deadline and abort signal: either ends the wait, and the session.
      .then(() => this.#grpc.waitForWire(this.#options))
      .then(
        (loaded) => {
          // Cancelled or failed while the code loaded: nothing to send.
          if (pending.done) return;
          pending.bound = loaded.wire.sharedMemoryOutputs(request);
          this.open(loaded.options).call.write(bytes);
        },
        (error: unknown) => this.fail(InfergateError.from(error)),
      )
      .catch((error: unknown) => this.finish(pending, InfergateError.from(error)))
      .finally(() => {
        // The last waiting write out: later ones go straight to the stream again.
        if (--this.#waitingWrites === 0) this.#opening = undefined;
      });
  }

  private async *iterate(pending: Pending): AsyncIterable<InferResult> {
    try {
      while (true) {
        const next = pending.queue.shift();
        if (next !== undefined) {
          this.#buffered--;
          if (this.#buffered < HIGH_WATER / 2) this.#stream?.call.resume();
          yield next;
          continue;
        }
        if (pending.done) {
          if (pending.error) throw pending.error;
          return;
        }
        await new Promise<void>((resolve) => {
          pending.wake = resolve;
        });
        pending.wake = undefined;
      }
    } finally {
      // A reader that leaves early stops caring; the request itself runs to completion on the server.
      this.#buffered -= pending.queue.length;
      pending.queue.length = 0;
    }
  }

  /** Half-closes the stream once every request has finished, and waits for the server to end it. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#opening;
    if (this.#stream === undefined) return;
    if (this.#pending.size === 0) this.#stream.call.end();
    await this.#ended;
  }

  /** Cancels the call: every unfinished request fails with CANCELLED. */
  cancel(): void {
    if (this.#stream === undefined && this.#pending.size === 0) return;
    this.fail(
      new InfergateError(ErrorCode.Cancelled, 'the stream session was cancelled', {
        endpoint: this.#grpc.address,
      }),
    );
    this.#stream?.call.cancel();
  }
}
