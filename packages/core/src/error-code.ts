/**
 * The SDK's error codes: gRPC's status names plus a few SDK codes, and which of them mean "try
 * again" or "busy, not broken". Kept apart from errors.ts so that modules errors.ts imports (the
 * network mapping) can read the codes without an import cycle.
 */

export const ErrorCode = {
  Cancelled: 'CANCELLED',
  Unknown: 'UNKNOWN',
  InvalidArgument: 'INVALID_ARGUMENT',
  DeadlineExceeded: 'DEADLINE_EXCEEDED',
  NotFound: 'NOT_FOUND',
  AlreadyExists: 'ALREADY_EXISTS',
  PermissionDenied: 'PERMISSION_DENIED',
  ResourceExhausted: 'RESOURCE_EXHAUSTED',
  FailedPrecondition: 'FAILED_PRECONDITION',
  Aborted: 'ABORTED',
  OutOfRange: 'OUT_OF_RANGE',
  Unimplemented: 'UNIMPLEMENTED',
  Internal: 'INTERNAL',
  Unavailable: 'UNAVAILABLE',
  DataLoss: 'DATA_LOSS',
  Unauthenticated: 'UNAUTHENTICATED',
  // SDK codes
  QueueFull: 'QUEUE_FULL',
  BudgetExceeded: 'BUDGET_EXCEEDED',
  BreakerOpen: 'BREAKER_OPEN',
  PriceUnknown: 'PRICE_UNKNOWN',
  RateLimited: 'RATE_LIMITED',
  Overloaded: 'OVERLOADED',
  ContextLengthExceeded: 'CONTEXT_LENGTH_EXCEEDED',
  ContentFiltered: 'CONTENT_FILTERED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Codes that mean "try again later": the request itself was fine. */
const retryableCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCode.Unavailable,
  ErrorCode.ResourceExhausted,
  ErrorCode.Aborted,
  ErrorCode.QueueFull,
  ErrorCode.RateLimited,
  ErrorCode.Overloaded,
  ErrorCode.BreakerOpen,
]);

/**
 * Codes that mean "the target is busy, not broken": a router falls back without counting a failure
 * and cools the target instead of tripping its breaker.
 */
const backpressureCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCode.QueueFull,
  ErrorCode.RateLimited,
  ErrorCode.Overloaded,
  ErrorCode.ResourceExhausted,
]);

export function isRetryableCode(code: ErrorCode): boolean {
  return retryableCodes.has(code);
}

export function isBackpressureCode(code: ErrorCode): boolean {
  return backpressureCodes.has(code);
}
