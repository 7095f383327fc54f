import type { ErrorMappingOptions } from './http-errors.js';
import { sendError } from './http-errors.js';
import type { ErrorHandler } from './http-types.js';
import { DEFAULT_REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

export interface ErrorHandlerOptions extends ErrorMappingOptions {
  /** Header carrying the caller's request id, for errors raised before infergate() ran. @default "x-request-id" */
  requestIdHeader?: string;
}

/**
 * Express error middleware: any error thrown by earlier middleware or later handlers becomes the
 * JSON error body. Honours `err.status`/`err.statusCode` and `err.expose` as Express's own handler
 * does (a malformed body under `express.json()` is 400, an oversized one 413); a 5xx's message is
 * logged with the request id and the client gets a generic one, unless `exposeInternalErrors`.
 */
export function errorHandler(options: ErrorHandlerOptions = {}): ErrorHandler {
  const { requestIdHeader = DEFAULT_REQUEST_ID_HEADER, ...mapping } = options;
  // Express tells error middleware apart by its four parameters, so `_next` must stay.
  return (error, request, response, _next) => {
    sendError(response, error, requestIdOf(request, requestIdHeader), {
      ...request.infergate?.errors,
      ...mapping,
    });
  };
}
