import { abortError, type CallScope, ErrorCode, InfergateError, networkErrorCode } from '@infergate/core';
import { redactSecrets } from './redact.js';

/** What an error of one chat call is told about the call. */
export interface ChatErrorContext {
  provider: string;
  model: string;
  endpoint: string | undefined;
  secrets: readonly string[];
}

/** Errors raised below the adapter (a schema check, the transport) get the call's model and endpoint. */
export function withCallContext(error: InfergateError, context: ChatErrorContext): InfergateError {
  const endpoint = error.endpoint ?? context.endpoint;
  if (error.model !== undefined && endpoint === error.endpoint) return error;
  return InfergateError.wrap(error, {
    model: error.model ?? context.model,
    ...(endpoint === undefined ? {} : { endpoint }),
  });
}

/**
 * Whatever was thrown during a call, as an InfergateError without secrets: the scope's typed
 * reason when it aborted (CANCELLED, DEADLINE_EXCEEDED), UNAVAILABLE for socket and DNS failures,
 * UNKNOWN for the rest; always with the call's model and endpoint.
 */
export function toChatError(error: unknown, scope: CallScope, context: ChatErrorContext): InfergateError {
  const signal = scope.signal;
  if (signal?.aborted) return withCallContext(abortError(signal), context);
  if (error instanceof InfergateError) return withCallContext(error, context);
  const text = redactSecrets(error instanceof Error ? error.message : String(error), context.secrets);
  const network = networkErrorCode(error);
  const options = {
    model: context.model,
    ...(context.endpoint === undefined ? {} : { endpoint: context.endpoint }),
    cause: error,
  };
  if (network !== undefined) {
    return new InfergateError(network, `${context.provider}: ${describeNetwork(error, text)}`, options);
  }
  return new InfergateError(ErrorCode.Unknown, `${context.provider}: ${text}`, options);
}

/** fetch says "fetch failed" / "terminated"; the socket error in `cause` says what happened. */
function describeNetwork(error: unknown, text: string): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.message === 'string') {
    const code = typeof cause.code === 'string' ? ` (${cause.code})` : '';
    return `${text}: ${cause.message}${code}`;
  }
  return text;
}
