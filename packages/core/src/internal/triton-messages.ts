import { ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';

/**
 * Errors inside a ModelStreamInfer response arrive as bare text without a status code. Classify
 * them by Triton's wording so the router can tell busy from broken from the caller's own mistake.
 */
const patterns: ReadonlyArray<readonly [RegExp, ErrorCode]> = [
  [/exceeds maximum queue size/i, ErrorCode.QueueFull],
  [/request timeout expired/i, ErrorCode.DeadlineExceeded],
  [/(unknown model|is not found|not ready|no version)/i, ErrorCode.NotFound],
  [
    /(unexpected|\bexpect(ed|ing)\b|invalid argument|mismatch|must specify|not supported|unable to parse)/i,
    ErrorCode.InvalidArgument,
  ],
  [/cancel/i, ErrorCode.Cancelled],
];

export function classifyStreamError(message: string, context: InfergateErrorOptions): InfergateError {
  const code = patterns.find(([pattern]) => pattern.test(message))?.[1] ?? ErrorCode.Internal;
  return new InfergateError(code, message, context);
}
