import type { ModelOptions } from '../client.js';
import { ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';
import { assertHeadersRecord } from '../header-values.js';
import { classifyStreamError } from '../internal/triton-messages.js';
import { parseServerSentEvents } from '../server-sent-events.js';
import { fromFetchFailure } from './http-status.js';
import { type HttpTransport, modelPath } from './http-transport.js';

/**
 * A request to Triton's generate extension: each key that names a model input becomes that input
 * (a scalar or a flat list), `parameters` becomes the request parameters.
 * e.g. `{ text_input: 'Hello', max_tokens: 16, parameters: { temperature: 0 } }`.
 */
export type GenerateRequest = Readonly<Record<string, unknown>>;

/** One response: `model_name`, `model_version`, and each output by name (e.g. `text_output`). */
export interface GenerateResponse {
  model_name: string;
  model_version: string;
  [output: string]: unknown;
}

function checkRequest(request: GenerateRequest): void {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'a generate request must be an object of inputs');
  }
}

function asResponse(json: unknown, context: InfergateErrorOptions): GenerateResponse {
  if (typeof json !== 'object' || json === null) {
    throw new InfergateError(
      ErrorCode.DataLoss,
      'the server sent a generate response that is not a JSON object',
      context,
    );
  }
  const error = (json as { error?: unknown }).error;
  if (typeof error === 'string') throw classifyStreamError(error, context);
  return json as GenerateResponse;
}

/** POST …/generate: one request, one JSON response. */
export async function generate(
  http: HttpTransport,
  model: string,
  request: GenerateRequest,
  options: ModelOptions = {},
): Promise<GenerateResponse> {
  checkRequest(request);
  const context = { model, endpoint: http.address };
  const json = await http.json<unknown>(
    {
      method: 'POST',
      path: `${modelPath(model, options.version)}/generate`,
      json: request,
      what: 'generate()',
      context,
    },
    options,
  );
  return asResponse(json, context);
}

/**
 * POST …/generate_stream: the server-sent events of a decoupled model, one response each. Leaving
 * the loop early, or aborting `signal`, cancels the request; an `error` event ends it with a typed
 * error (classified by Triton's wording, as gRPC stream errors are).
 */
export async function* generateStream(
  http: HttpTransport,
  model: string,
  request: GenerateRequest,
  options: ModelOptions = {},
): AsyncIterable<GenerateResponse> {
  checkRequest(request);
  // Before the spread below, which would drop a Map's entries and turn an array's into headers.
  if (options.headers) assertHeadersRecord(options.headers, 'call headers');
  const context = { model, endpoint: http.address };
  const open = await http.open(
    {
      method: 'POST',
      path: `${modelPath(model, options.version)}/generate_stream`,
      json: request,
      what: 'generateStream()',
      context,
    },
    { ...options, headers: { accept: 'text/event-stream', ...options.headers } },
  );
  let finished = false;
  try {
    const body = open.response.body;
    if (body === null) return;
    for await (const { data } of parseServerSentEvents(body, {
      maxEventChars: http.options.maxEventBytes,
      race: open.scope.race,
    })) {
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch (error) {
        throw new InfergateError(
          ErrorCode.DataLoss,
          `generateStream(): an event is not JSON: ${data.slice(0, 200)}`,
          {
            ...context,
            cause: error,
          },
        );
      }
      yield asResponse(json, context);
    }
    finished = true;
  } catch (error) {
    throw error instanceof InfergateError ? error : fromFetchFailure(error, open.scope.signal, context);
  } finally {
    if (!finished) open.scope.abort();
    open.done();
  }
}
