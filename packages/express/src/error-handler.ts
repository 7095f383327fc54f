import type { ErrorMappingOptions } from './http-errors.js';
import { sendError } from './http-errors.js';
import type { ErrorHandler } from './http-types.js';

/** Express error middleware: any error thrown by later handlers becomes the JSON error body. */
export function errorHandler(options: ErrorMappingOptions = {}): ErrorHandler {
  // Express tells error middleware apart by its four parameters, so `_next` must stay.
  return (error, request, response, _next) => {
    sendError(response, error, request.infergate?.requestId ?? 'unknown', {
      ...request.infergate?.errors,
      ...options,
    });
  };
}
