import { ErrorCode, InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { classifyError, isGatewayFailure, toInfergateError } from './classify.js';

const error = (code: ErrorCode, httpStatus?: number) =>
  new InfergateError(code, 'x', httpStatus === undefined ? {} : { httpStatus });

describe('classifyError', () => {
  it.each([
    [ErrorCode.Unavailable, undefined, 'failure'],
    [ErrorCode.DeadlineExceeded, undefined, 'failure'],
    [ErrorCode.Internal, 500, 'failure'],
    [ErrorCode.Unknown, undefined, 'failure'],
    [ErrorCode.Unavailable, 503, 'failure'],
    [ErrorCode.QueueFull, undefined, 'backpressure'],
    [ErrorCode.RateLimited, 429, 'backpressure'],
    [ErrorCode.Overloaded, 529, 'backpressure'],
    [ErrorCode.ResourceExhausted, undefined, 'backpressure'],
    [ErrorCode.Unknown, 429, 'backpressure'],
    [ErrorCode.BreakerOpen, undefined, 'backpressure'],
    [ErrorCode.InvalidArgument, 400, 'reject'],
    [ErrorCode.Unauthenticated, 401, 'reject'],
    [ErrorCode.PermissionDenied, 403, 'reject'],
    [ErrorCode.NotFound, 404, 'reject'],
    [ErrorCode.Unknown, 422, 'reject'],
    [ErrorCode.ContextLengthExceeded, 400, 'context-length'],
  ] as const)('%s (HTTP %s) → %s', (code, status, expected) => {
    expect(classifyError(error(code, status))).toBe(expected);
  });

  it('counts UNAVAILABLE and HTTP 502/503/504 as gateway failures, nothing else', () => {
    expect(isGatewayFailure(error(ErrorCode.Unavailable))).toBe(true);
    expect(isGatewayFailure(error(ErrorCode.Internal, 502))).toBe(true);
    expect(isGatewayFailure(error(ErrorCode.Unknown, 504))).toBe(true);
    expect(isGatewayFailure(error(ErrorCode.DeadlineExceeded))).toBe(false);
    expect(isGatewayFailure(error(ErrorCode.Internal, 500))).toBe(false);
    expect(isGatewayFailure(error(ErrorCode.Overloaded, 503))).toBe(false); // busy, not gone
  });

  it('treats anything as cancelled when the caller aborted', () => {
    expect(classifyError(error(ErrorCode.Unavailable), true)).toBe('cancelled');
  });

  it('maps Node socket errors to UNAVAILABLE, walking cause', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(toInfergateError(new Error('fetch failed', { cause: socket })).code).toBe(ErrorCode.Unavailable);
    expect(toInfergateError(new TypeError('boom')).code).toBe(ErrorCode.Unknown);
  });
});
