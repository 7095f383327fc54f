import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import type { HandlerTable, RpcContext, UnaryMethodKey } from './handler-table.js';
import { httpAccessRefusal } from './http-access.js';
import { readGenerate, readHttpInfer, writeGenerate, writeHttpInfer } from './http-infer.js';
import { matchRoute } from './http-routes.js';
import { runInference } from './inference-pipeline.js';
import { status } from './internal/grpc-status.js';
import { jsonText } from './internal/http-json.js';
import { GRPCInferenceService, type ModelInferRequest, type ModelInferResponse } from './internal/proto.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';

type AnyHandler = (request: unknown, context: RpcContext) => unknown;

/** gRPC status → the HTTP status Triton answers with for the same failure. */
const httpStatus: Readonly<Record<number, number>> = {
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

const MODEL_CALL = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?\/(infer|generate|generate_stream)$/;
const HEADER_LENGTH = 'inference-header-content-length';
/** Request bodies past this are refused (every buffer bounded). */
const MAX_BODY_BYTES = 2 ** 31 - 1;

function headersOf(request: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') out[key] = value;
    else if (Array.isArray(value)) out[key] = value.join(', ');
  }
  return out;
}

async function readRequestBody(request: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > MAX_BODY_BYTES) throw new RpcError(status.INVALID_ARGUMENT, 'request body too large');
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

function sendJson(response: ServerResponse, code: number, json: unknown): void {
  const text = json === undefined ? '' : jsonText(json);
  response.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function sendError(response: ServerResponse, error: unknown): void {
  const failure = toRpcError(error);
  if (response.headersSent) {
    response.destroy();
    return;
  }
  sendJson(response, httpStatus[failure.code] ?? 500, { error: failure.message });
}

/**
 * The reference server's KServe v2 HTTP/REST port (with Triton's binary tensor data and generate
 * extensions), on the same state and handlers as its gRPC port: a model, a fault, a counter or a
 * shared-memory region is the same whichever protocol the test uses.
 */
export class HttpListener {
  readonly #state: ServerState;
  readonly #handlers: HandlerTable;
  readonly #host: string;
  #port: number;
  #server: Server | undefined;

  constructor(state: ServerState, handlers: HandlerTable, host: string, port: number) {
    this.#state = state;
    this.#handlers = handlers;
    this.#host = host;
    this.#port = port;
  }

  get port(): number {
    return this.#port;
  }

  async listen(): Promise<void> {
    if (this.#server !== undefined) return;
    const server = createServer((request, response) => {
      void this.#serve(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.#host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops accepting; open requests get `graceMs` to finish, then every connection is closed. */
  async stop(graceMs: number): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    server.closeIdleConnections();
    const timer = setLongTimeout(() => server.closeAllConnections(), graceMs);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearLongTimer(timer);
  }

  /** Drops every connection at once, as a crash would. */
  kill(): void {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    server.closeAllConnections();
    server.close();
  }

  async #serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const controller = new AbortController();
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    let key: UnaryMethodKey | undefined;
    let model: string | undefined;
    response.on('close', () => {
      if (response.writableFinished) return;
      if (key === 'modelInfer' && model !== undefined) this.#state.stats.of(model).cancellations += 1;
      controller.abort(new RpcError(status.CANCELLED, 'the client closed the connection'));
    });
    this.#state.inFlight.add(controller);
    try {
      const body = await readRequestBody(request);
      const metadata = headersOf(request);
      const context: RpcContext = { metadata, signal: controller.signal };
      const modelCall = request.method === 'POST' ? MODEL_CALL.exec(path) : null;
      if (modelCall !== null) {
        model = decodeURIComponent(modelCall[1] as string);
        const version = modelCall[2] === undefined ? '' : decodeURIComponent(modelCall[2]);
        key = 'modelInfer';
        this.#state.calls.record({ method: 'ModelInfer', model, metadata, time: Date.now() });
        if (this.#refused('ModelInfer', metadata, response)) return;
        await this.#state.gate.wait(controller.signal);
        const action = modelCall[3];
        if (action === 'infer') await this.#infer(model, version, body, metadata, context, response);
        else await this.#generate(model, version, body, context, response, action === 'generate_stream');
        return;
      }
      let json: Record<string, unknown> = {};
      if (body.byteLength > 0) {
        try {
          json = JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>;
        } catch {
          throw new RpcError(status.INVALID_ARGUMENT, 'failed to parse the request JSON buffer');
        }
      }
      const route = matchRoute(request.method ?? 'GET', path, json);
      if (route === undefined) {
        sendJson(response, 404, { error: 'Not Found' });
        return;
      }
      key = route.key;
      model = route.model;
      const method = GRPCInferenceService.method[route.key];
      this.#state.calls.record({ method: method.name, model, metadata, time: Date.now() });
      if (this.#refused(method.name, metadata, response)) return;
      await this.#state.gate.wait(controller.signal);
      const handler = this.#handlers[route.key] as AnyHandler | undefined;
      if (handler === undefined)
        throw new RpcError(status.UNIMPLEMENTED, `infergate-testing does not implement ${method.name}`);
      const result = await handler(create(method.input, route.request as never), context);
      const answer = route.answer(create(method.output, result as never) as never);
      sendJson(response, answer.status, answer.json);
    } catch (error) {
      sendError(response, error);
    } finally {
      this.#state.inFlight.delete(controller);
    }
  }

  /** Answers a refusal (missing extension, restricted group without its header); true if it did. */
  #refused(method: string, headers: Record<string, string>, response: ServerResponse): boolean {
    const refusal = httpAccessRefusal(
      method,
      headers,
      this.#state.restrictions,
      this.#state.identity.extensions,
    );
    if (refusal === undefined) return false;
    sendJson(response, refusal.status, { error: refusal.message });
    return true;
  }

  async #infer(
    model: string,
    version: string,
    body: Uint8Array,
    metadata: Record<string, string>,
    context: RpcContext,
    response: ServerResponse,
  ): Promise<void> {
    const headerValue = metadata[HEADER_LENGTH];
    const headerLength = headerValue === undefined ? undefined : Number(headerValue);
    const { message, binaryOutputs } = readHttpInfer(model, version, body, headerLength);
    const handler = this.#handlers.modelInfer;
    if (handler === undefined) throw new RpcError(status.UNIMPLEMENTED, 'ModelInfer is not served');
    const result = await handler(message, context);
    const out = writeHttpInfer(create(GRPCInferenceService.method.modelInfer.output, result), binaryOutputs);
    const headers: Record<string, string | number> = {
      'content-type': out.headerLength === undefined ? 'application/json' : 'application/octet-stream',
      'content-length': out.body.byteLength,
    };
    if (out.headerLength !== undefined) headers[HEADER_LENGTH] = out.headerLength;
    response.writeHead(200, headers);
    response.end(out.body);
  }

  async #generate(
    model: string,
    version: string,
    body: Uint8Array,
    context: RpcContext,
    response: ServerResponse,
    stream: boolean,
  ): Promise<void> {
    const resolved = this.#state.models.resolve(model, version);
    const message: ModelInferRequest = readGenerate(
      model,
      version,
      resolved.model.inputs,
      resolved.model.outputs,
      resolved.model.maxBatchSize > 0,
      body,
    );
    const responses = runInference(this.#state, message, context, 'stream');
    if (!stream) {
      const answers: Record<string, unknown>[] = [];
      for await (const answer of responses)
        if (answer.outputs.length > 0) answers.push(writeGenerate(answer));
      if (answers.length !== 1) {
        throw new RpcError(
          status.INVALID_ARGUMENT,
          `generate expects exactly one response from model '${model}', got ${answers.length}; use generate_stream`,
        );
      }
      sendJson(response, 200, answers[0]);
      return;
    }
    // Errors before the first event answer with a status; later ones as an `error` event, as Triton does.
    const iterator = responses[Symbol.asyncIterator]();
    let first: IteratorResult<ModelInferResponse, void>;
    do first = await iterator.next();
    while (!first.done && first.value.outputs.length === 0);
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    try {
      if (!first.done) response.write(`data: ${jsonText(writeGenerate(first.value))}\n\n`);
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        if (next.value.outputs.length > 0) response.write(`data: ${jsonText(writeGenerate(next.value))}\n\n`);
      }
    } catch (error) {
      response.write(`data: ${jsonText({ error: toRpcError(error).message })}\n\n`);
    }
    response.end();
  }
}
