import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../errors.js';
import { fromGrpcStatus } from '../grpc-status.js';
import { classifyStreamError } from './triton-messages.js';

/**
 * Triton 2.51's own error texts (captured from ModelStreamInfer and ModelInfer against the interop server; the last one
 * stands for any text Triton does not use for a status), the
 * gRPC status the same mistake gets over unary ModelInfer, and the code both must become.
 */
const tritonMessages: ReadonlyArray<{ text: string; unaryStatus: number; code: ErrorCode }> = [
  {
    text: "[request id: <id_unknown>] inference input 'IN' data-type is 'FP32', but model 'repeat' expects 'INT32'",
    unaryStatus: 3,
    code: 'INVALID_ARGUMENT',
  },
  {
    text: "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'identity_fp32'. Expected [-1], got [2,2]. ",
    unaryStatus: 3,
    code: 'INVALID_ARGUMENT',
  },
  {
    text: "[request id: <id_unknown>] unexpected shape for input 'INPUT1' for model 'add_sub'. Expected [-1,16], got [1,5]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape.",
    unaryStatus: 3,
    code: 'INVALID_ARGUMENT',
  },
  {
    text: "unexpected inference input 'NOPE' for model 'identity_fp32'",
    unaryStatus: 3,
    code: 'INVALID_ARGUMENT',
  },
  {
    text: "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'add_sub'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).",
    unaryStatus: 3,
    code: 'INVALID_ARGUMENT',
  },
  {
    text: "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'identity_fp32_batched'",
    unaryStatus: 3,
    code: 'INVALID_ARGUMENT',
  },
  { text: "Request for unknown model: 'nope' is not found", unaryStatus: 5, code: 'NOT_FOUND' },
  {
    text: "Request for unknown model: 'identity_fp32' version 7 is not found",
    unaryStatus: 5,
    code: 'NOT_FOUND',
  },
  { text: 'Exceeds maximum queue size', unaryStatus: 14, code: 'QUEUE_FULL' },
  { text: 'Request timeout expired', unaryStatus: 14, code: 'DEADLINE_EXCEEDED' },
  {
    // Anything else (a model's own exception text) stays INTERNAL, as Triton's unary status is.
    text: 'ValueError: boom',
    unaryStatus: 13,
    code: 'INTERNAL',
  },
];

describe("Triton's stream error texts", () => {
  for (const { text, unaryStatus, code } of tritonMessages) {
    it(`${code}: ${text.slice(0, 70)}`, () => {
      const streamed = classifyStreamError(text, { model: 'm' });
      const unary = fromGrpcStatus({ code: unaryStatus, details: text });
      expect(streamed.code).toBe(code);
      expect(unary.code).toBe(code);
      expect(streamed.retryable).toBe(unary.retryable);
      expect(streamed.rawMessage).toBe(text.trim());
    });
  }
});
