import { InfergateError } from '@infergate/core';

/**
 * The error a stream ends with when its target fails after the first chunk: the same code, never
 * retryable through this router (the output so far cannot be unsent), with what was already
 * yielded in `details.partial`.
 */
export function partialStreamError(error: InfergateError, target: string, partial: unknown): InfergateError {
  return InfergateError.wrap(error, {
    message: `${error.rawMessage} (stream from '${target}' failed after output began)`,
    cause: error,
    retryable: false,
    details: { ...error.details, target, partial, afterFirstChunk: true },
  });
}
