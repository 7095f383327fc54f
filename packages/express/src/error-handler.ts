import type { ErrorMappingOptions } from './http-errors.js';
import { sendError } from './http-errors.js';
import type { ErrorHandler } from './http-types.js';

/** Express error middleware: any error thrown by later handlers becomes the JSON error body. */
export function errorHandler(options: ErrorMappingOptions = {}): ErrorHandler {
  return (error, request, response) => {
    sendError(response, error, request.infergate?.requestId ?? 'unknown', {
      ...request.infergate?.errors,
      ...options,
    });
  };
}
