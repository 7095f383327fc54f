import { ErrorCode, InfergateError, type InfergateErrorOptions } from './errors.js';
import { networkErrorCode } from './network-errors.js';

/** gRPC status numbers → our codes. The one place that knows grpc-js statuses. */
const byStatus: readonly ErrorCode[] = [
  ErrorCode.Unknown, // 0 OK never becomes an error
  ErrorCode.Cancelled,
  ErrorCode.Unknown,
  ErrorCode.InvalidArgument,
  ErrorCode.DeadlineExceeded,
  ErrorCode.NotFound,
  ErrorCode.AlreadyExists,
  ErrorCode.PermissionDenied,
  ErrorCode.ResourceExhausted,
  ErrorCode.FailedPrecondition,
  ErrorCode.Aborted,
  ErrorCode.OutOfRange,
  ErrorCode.Unimplemented,
  ErrorCode.Internal,
  ErrorCode.Unavailable,
  ErrorCode.DataLoss,
  ErrorCode.Unauthenticated,
];

export interface GrpcStatusLike {
  code?: number;
  details?: string;
  message?: string;
}

/** Triton's answer when a model's queue policy rejects a request: busy, not broken. */
const QUEUE_FULL_PATTERN = /exceeds maximum queue size/i;
/** Triton's answer when a request outlived its server-side `timeout` parameter in the queue. */
const SERVER_TIMEOUT_PATTERN = /request timeout expired/i;
/** Triton's answer to a restricted API called without (or with a wrong) access header. */
const RESTRICTED_PATTERN = /this protocol is restricted/i;
/**
 * A message over a size limit: grpc-js says "Received message larger than max (N vs. M)" on the
 * receive side (ours or the server's) and "Attempted to send message with a size larger than M" on
 * the send side. Sending it again cannot help.
 */
const TOO_LARGE_PATTERN = /message larger than max|send message with a size larger than/i;

/** What to do about a message over the limit, appended to the error text. */
export const MESSAGE_SIZE_HINT =
  "raise the client's `maxMessageBytes` option (createTritonClient; default and maximum 2 GiB - 1) " +
  "or Triton's own limit, or send less per call";

/**
 * The error for a request or response over `maxMessageBytes`: INVALID_ARGUMENT and never
 * retryable, naming the option to raise.
 */
export function messageTooLarge(
  direction: 'request' | 'response',
  bytes: number,
  limit: number,
  context: InfergateErrorOptions = {},
): InfergateError {
  return new InfergateError(
    ErrorCode.InvalidArgument,
    `the ${direction} is ${bytes} bytes, over maxMessageBytes (${limit}): ${MESSAGE_SIZE_HINT}`,
    {
      ...context,
      retryable: false,
      details: { ...context.details, option: 'maxMessageBytes', bytes, limit, direction },
    },
  );
}

/**
 * grpc-js could not decode the server's answer, or a unary call ended "OK" without a whole message
 * (grpc-js calls that UNIMPLEMENTED): the response is corrupt or cut short, not the request.
 */
const PARSE_ERROR_PATTERN = /^Response message parsing error/;
const NO_MESSAGE_PATTERN = /^No message received/;

/**
 * grpc-js's connection failure when the peer answers the HTTP/2 preface with HTTP/1 (Node's http2
 * reports nghttp2's protocol error): the url points at an HTTP port, such as Triton's 8000.
 */
const HTTP1_PEER_PATTERN = /Last error: Protocol error/;
export const HTTP_PORT_HINT = "this looks like an HTTP port; Triton's gRPC port is usually 8001";

export function fromGrpcStatus(error: GrpcStatusLike, context: InfergateErrorOptions = {}): InfergateError {
  const status = typeof error.code === 'number' ? error.code : 2;
  let details = error.details || error.message || 'no details';
  let code = byStatus[status] ?? ErrorCode.Unknown;
  let hint = '';
  if (code === ErrorCode.Unavailable && QUEUE_FULL_PATTERN.test(details)) code = ErrorCode.QueueFull;
  else if (code === ErrorCode.Unavailable && SERVER_TIMEOUT_PATTERN.test(details)) {
    code = ErrorCode.DeadlineExceeded;
  } else if (code === ErrorCode.Unavailable && RESTRICTED_PATTERN.test(details)) {
    code = ErrorCode.PermissionDenied;
  } else if (
    (code === ErrorCode.Internal && PARSE_ERROR_PATTERN.test(details)) ||
    (code === ErrorCode.Unimplemented && NO_MESSAGE_PATTERN.test(details))
  ) {
    code = ErrorCode.DataLoss;
  } else if (code === ErrorCode.Unavailable && HTTP1_PEER_PATTERN.test(details)) {
    // A configuration mistake, not an outage: retrying or tripping a breaker cannot help.
    code = ErrorCode.FailedPrecondition;
    details = `${context.endpoint ?? 'the server'} did not answer in HTTP/2 (${details.trim()})`;
    hint = `: ${HTTP_PORT_HINT}`;
  } else if (code === ErrorCode.ResourceExhausted && TOO_LARGE_PATTERN.test(details)) {
    code = ErrorCode.InvalidArgument;
    hint = `: ${MESSAGE_SIZE_HINT}`;
  }
  if (code === ErrorCode.Unavailable || code === ErrorCode.Unknown || code === ErrorCode.Internal) {
    // grpc-js reports connection failures as UNAVAILABLE with the socket error in the text.
    const network = networkErrorCode(details);
    if (network !== undefined) code = network;
  }
  const where = context.model
    ? ` (model '${context.model}'${context.endpoint ? ` at ${context.endpoint}` : ''})`
    : '';
  return new InfergateError(code, `${details}${hint}${where}`, {
    ...context,
    cause: error,
    grpcCode: status,
    ...(code === ErrorCode.InvalidArgument && hint !== ''
      ? { retryable: false, details: { ...context.details, option: 'maxMessageBytes' } }
      : {}),
  });
}
