import { ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';

/**
 * Errors inside a ModelStreamInfer response arrive as bare text without a status code. Classify
 * them by Triton's wording into the code the same mistake gets over unary ModelInfer (where Triton
 * sends a gRPC status), so the router can tell busy from broken from the caller's own mistake. The
 * texts are Triton's own; packages/core/src/internal/triton-messages.test.ts lists them.
 */
const patterns: ReadonlyArray<readonly [RegExp, ErrorCode]> = [
  [/exceeds maximum queue size/i, ErrorCode.QueueFull],
  [/request timeout expired/i, ErrorCode.DeadlineExceeded],
  [/this protocol is restricted/i, ErrorCode.PermissionDenied],
  [
    /(unknown model|is not found|is not ready|not ready|no version|has no available versions)/i,
    ErrorCode.NotFound,
  ],
  [
    new RegExp(
      [
        'unexpected',
        '\\bexpect(s|ed|ing)\\b',
        'invalid argument',
        'mismatch',
        'must specify',
        'batch-size must be',
        'missing required input',
        'not supported',
        'unable to parse',
      ].join('|'),
      'i',
    ),
    ErrorCode.InvalidArgument,
  ],
  [/\bcancel(l)?ed\b|\bcancel\b/i, ErrorCode.Cancelled],
];

/** The code Triton's error text stands for; INTERNAL when the text is not one Triton uses for a status. */
export function tritonMessageCode(message: string): ErrorCode {
  return patterns.find(([pattern]) => pattern.test(message))?.[1] ?? ErrorCode.Internal;
}

export function classifyStreamError(message: string, context: InfergateErrorOptions): InfergateError {
  return new InfergateError(tritonMessageCode(message), message.trim(), context);
}
