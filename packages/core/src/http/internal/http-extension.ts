import { InfergateError } from '../../errors.js';
import { withExtension } from '../../extension.js';
import type { HttpTransport } from '../http-transport.js';

/** A server without the endpoint answers 404/405/501 with a generic text, not a Triton error about a model. */
const MISSING_ROUTE =
  /^(not found|method not allowed|not implemented)( \(|$)|not implement|unknown (route|endpoint)/i;

function isMissingRoute(error: unknown): boolean {
  return (
    error instanceof InfergateError &&
    (error.httpStatus === 404 || error.httpStatus === 405 || error.httpStatus === 501) &&
    MISSING_ROUTE.test(error.rawMessage.trim())
  );
}

/** Runs an extension's HTTP call; a server without the route gets an error naming the extension. */
export function withHttpExtension<T>(
  http: HttpTransport,
  extension: string,
  operation: string,
  call: () => Promise<T>,
): Promise<T> {
  return withExtension(extension, operation, http.address, call, isMissingRoute);
}
