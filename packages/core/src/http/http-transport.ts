import { type CallScope, createCallScope } from '../call-scope.js';
import { ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';
import { Extension } from '../extension.js';
import { assertHeadersRecord, assertSafeHeaders, refusedHeader } from '../header-values.js';
import { callParameters } from '../internal/call-parameters.js';
import { checkOutputsInto, writeOutputsIntoAt } from '../internal/infer-response-into.js';
import { checkRequestedOutputs } from '../internal/requested-outputs.js';
import { parseOptions } from '../parse-options.js';
import type { CallOptions, InferRequest, InferResponse, InferTransport } from '../transport.js';
import {
  type FetchFunction,
  type HttpTransportOptions,
  httpOptionsSchema,
  type ResolvedHttpTransportOptions,
} from './http-options.js';
import { fromFetchFailure, fromHttpStatus } from './http-status.js';
import { jsonText } from './internal/json-text.js';
import {
  decodeInferResponse,
  type EncodedBody,
  encodeInferBody,
  HEADER_LENGTH,
} from './internal/kserve-json.js';
import { readBody } from './internal/read-body.js';

/** Names per-call headers in the errors that refuse them, as the gRPC transport does. */
const CALL_HEADERS = 'call headers';

/** What one HTTP exchange sends; the transport adds headers, deadline, abort and error mapping. */
export interface HttpExchange {
  method: 'GET' | 'POST';
  /** Path below the base URL, starting with `/v2`. */
  path: string;
  /** A JSON value (sent as JSON text) or an already encoded body. */
  json?: unknown;
  body?: EncodedBody;
  /** Names the call in DEADLINE_EXCEEDED messages. */
  what: string;
  /** Model, request id: copied into errors. */
  context?: InfergateErrorOptions;
}

/** An open response whose body the caller reads; `done()` ends the call's scope. */
export interface OpenResponse {
  response: Response;
  scope: CallScope;
  done(): void;
}

/**
 * Sets one header; a name or value fetch refuses (CR, LF, NUL, not a token, over U+00FF) is
 * INVALID_ARGUMENT naming the header. fetch's own TypeError quotes the value and read as a network
 * failure (UNAVAILABLE, retryable).
 */
function setHeader(headers: Headers, name: string, value: string, what: string): void {
  try {
    headers.set(name, value);
  } catch {
    throw refusedHeader(name, value, what);
  }
}

/** `/v2/models/<model>[/versions/<version>]`, each part escaped. */
export function modelPath(model: string, version?: string): string {
  if (typeof model !== 'string' || model === '') {
    throw new InfergateError(ErrorCode.InvalidArgument, 'model must be a non-empty string');
  }
  const base = `/v2/models/${encodeURIComponent(model)}`;
  return version ? `${base}/versions/${encodeURIComponent(version)}` : base;
}

/**
 * KServe v2 HTTP/REST to one endpoint over `fetch`: an InferTransport (so it goes under a batcher or a
 * router like the gRPC one) that also carries the management calls (see http-management.ts) and
 * Triton's generate extension. Only fetch, AbortSignal, TextEncoder/TextDecoder and ReadableStream
 * on its path, so it runs in Node, Deno, Bun and Workers alike.
 */
export class HttpTransport implements InferTransport {
  readonly options: ResolvedHttpTransportOptions;
  /** `host:port` of the endpoint, for errors. */
  readonly address: string;
  readonly #base: string;
  readonly #fetch: FetchFunction;
  /** Scopes of calls in flight, so `close()` can end them. */
  readonly #active = new Set<CallScope>();
  #binary: Promise<boolean> | undefined;
  #closed = false;

  constructor(options: ResolvedHttpTransportOptions) {
    this.options = options;
    const url = new URL(options.url);
    this.address = url.host;
    this.#base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    // Bound to globalThis: Workers and browsers refuse a fetch called as a method of another object.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    // What fetch cannot send would fail every call; refused here, as the gRPC client refuses it.
    const fixed = new Headers();
    for (const [name, value] of Object.entries(options.headers)) setHeader(fixed, name, value, 'headers');
    if (options.accessToken !== undefined)
      setHeader(fixed, options.accessHeader, options.accessToken, 'accessToken');
  }

  #headers(options: CallOptions, extra: Record<string, string> | undefined): Headers {
    const headers = new Headers(this.options.headers);
    if (this.options.accessToken !== undefined)
      headers.set(this.options.accessHeader, this.options.accessToken);
    const call = options.headers;
    if (call) {
      // Judged as the gRPC transport judges them where fetch would read them otherwise than meant:
      // a symbol key or a Map dropped, an array sent by index, a value that is not a string as its
      // text. Names and values fetch takes as given still go (a Latin-1 value among them).
      assertHeadersRecord(call, CALL_HEADERS);
      for (const name in call) {
        if (!Object.hasOwn(call, name)) continue;
        const value = call[name];
        if (typeof value !== 'string') assertSafeHeaders({ [name]: value } as never, CALL_HEADERS);
        setHeader(headers, name, value as string, CALL_HEADERS);
      }
    }
    if (extra) for (const [key, value] of Object.entries(extra)) headers.set(key, value);
    return headers;
  }

  /**
   * Sends one request and returns the response once its status is 2xx (anything else is thrown as
   * a typed error); the caller reads the body and calls `done()`.
   */
  async open(exchange: HttpExchange, options: CallOptions = {}): Promise<OpenResponse> {
    const context: InfergateErrorOptions = { endpoint: this.address, ...exchange.context };
    if (this.#closed) {
      throw new InfergateError(
        ErrorCode.FailedPrecondition,
        `the HTTP client for ${this.address} is closed`,
        context,
      );
    }
    const scope = createCallScope({
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? this.options.timeoutMs,
      what: exchange.what,
      own: true,
    });
    this.#active.add(scope);
    const done = () => {
      scope.dispose();
      this.#active.delete(scope);
    };
    try {
      if (scope.signal?.aborted) throw scope.signal.reason;
      let body: Uint8Array | string | undefined;
      let extra: Record<string, string> | undefined;
      if (exchange.body !== undefined) {
        body = exchange.body.body;
        extra = exchange.body.headers;
      } else if (exchange.json !== undefined) {
        body = jsonText(exchange.json);
        extra = { 'content-type': 'application/json' };
      }
      const init: RequestInit = {
        method: exchange.method,
        headers: this.#headers(options, extra),
        ...(scope.signal ? { signal: scope.signal } : {}),
      };
      if (body !== undefined) init.body = body as NonNullable<RequestInit['body']>;
      let response: Response;
      try {
        response = await scope.race(this.#fetch(`${this.#base}${exchange.path}`, init));
      } catch (error) {
        throw fromFetchFailure(error, scope.signal, context);
      }
      if (!response.ok) {
        const text = await readBody(response, 64 * 1024, scope)
          .then((bytes) => new TextDecoder().decode(bytes))
          .catch(() => '');
        const retryAfter = Number(response.headers.get('retry-after'));
        throw fromHttpStatus(
          response.status,
          text,
          context,
          Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
        );
      }
      return { response, scope, done };
    } catch (error) {
      done();
      throw error instanceof InfergateError ? error : fromFetchFailure(error, scope.signal, context);
    }
  }

  /** One request, the whole body read (bounded by `maxResponseBytes`). */
  async exchange(
    exchange: HttpExchange,
    options: CallOptions = {},
  ): Promise<{ bytes: Uint8Array; headers: Headers }> {
    const open = await this.open(exchange, options);
    try {
      const bytes = await readBody(open.response, this.options.maxResponseBytes, open.scope);
      return { bytes, headers: open.response.headers };
    } catch (error) {
      throw fromFetchFailure(error, open.scope.signal, { endpoint: this.address, ...exchange.context });
    } finally {
      open.done();
    }
  }

  /** One request answered with JSON (an empty body reads as `undefined`). */
  async json<T>(exchange: HttpExchange, options: CallOptions = {}): Promise<T> {
    const { bytes } = await this.exchange(exchange, options);
    if (bytes.byteLength === 0) return undefined as T;
    try {
      return JSON.parse(new TextDecoder().decode(bytes)) as T;
    } catch (error) {
      throw new InfergateError(ErrorCode.DataLoss, `${exchange.what}: the server's answer is not JSON`, {
        endpoint: this.address,
        ...exchange.context,
        cause: error,
      });
    }
  }

  /** Whether inference uses the binary tensor extension: the option, or the server's metadata once. */
  binaryData(options: CallOptions = {}): Promise<boolean> {
    const setting = this.options.binaryData;
    if (setting !== 'auto') return Promise.resolve(setting);
    if (this.#binary === undefined) {
      const { signal: _signal, ...rest } = options;
      this.#binary = this.json<{ extensions?: unknown }>(
        { method: 'GET', path: '/v2', what: 'server metadata' },
        rest,
      ).then(
        (metadata) =>
          Array.isArray(metadata?.extensions) && metadata.extensions.includes(Extension.BinaryTensorData),
      );
      this.#binary.catch(() => {
        this.#binary = undefined;
      });
    }
    return this.#binary;
  }

  async infer(request: InferRequest, options: CallOptions = {}): Promise<InferResponse> {
    // `into` refused before anything is sent (decision 0026), for callers below the client too.
    if (request.outputs !== undefined) checkOutputsInto(request.outputs);
    const context: InfergateErrorOptions = {
      model: request.model,
      ...(request.id ? { requestId: request.id } : {}),
    };
    const binary = await this.binaryData(options);
    let body: EncodedBody;
    try {
      body = encodeInferBody(request, binary, callParameters(request, options));
    } catch (error) {
      throw InfergateError.from(error, ErrorCode.InvalidArgument);
    }
    const { bytes, headers } = await this.exchange(
      {
        method: 'POST',
        path: `${modelPath(request.model, request.modelVersion)}/infer`,
        body,
        what: 'the inference',
        context,
      },
      options,
    );
    const headerLength = headers.get(HEADER_LENGTH);
    let response: InferResponse;
    try {
      response = decodeInferResponse(bytes, headerLength === null ? undefined : Number(headerLength));
      checkRequestedOutputs(request, response);
    } catch (error) {
      throw error instanceof InfergateError
        ? new InfergateError(error.code, error.rawMessage, {
            ...context,
            endpoint: this.address,
            cause: error.cause,
          })
        : InfergateError.from(error, ErrorCode.DataLoss);
    }
    // Outputs bound to `into` are copied out of the body into the caller's memory (decision 0026).
    return writeOutputsIntoAt(
      request,
      response,
      { signal: options.signal },
      { ...context, endpoint: this.address },
    );
  }

  /**
   * KServe's HTTP protocol has no streaming inference: one request, one response. Decoupled models
   * (0..N responses) need `generateStream` (Triton's generate extension) or the gRPC transport.
   */
  async *stream(request: InferRequest, options: CallOptions = {}): AsyncIterable<InferResponse> {
    // Refused as on every stream (decision 0026), though this one answers once.
    if (request.outputs !== undefined) checkOutputsInto(request.outputs, true);
    yield await this.infer(request, options);
  }

  /** Ends every call in flight (CANCELLED) and refuses new ones. Idempotent; there is no connection to close. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const scope of this.#active) {
      scope.abort(new InfergateError(ErrorCode.Cancelled, `the HTTP client for ${this.address} was closed`));
    }
  }
}

/** An HTTP/REST transport to one KServe v2 / Triton endpoint; options are validated here. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  return new HttpTransport(parseOptions(httpOptionsSchema, options, 'HTTP transport options'));
}
