import { describe, expect, it } from 'vitest';
import { abortError, InfergateError } from './errors.js';
import { fromGrpcStatus } from './grpc-status.js';
import { networkErrorCode } from './network-errors.js';

describe('InfergateError', () => {
  it('carries code, retryable, context and a readable message', () => {
    const error = new InfergateError('UNAVAILABLE', 'server down', {
      model: 'm',
      endpoint: 'h:1',
      requestId: 'r',
    });
    expect(error.message).toBe('[UNAVAILABLE] server down');
    expect(error.retryable).toBe(true);
    expect(error.backpressure).toBe(false);
    expect(error.toJSON()).toMatchObject({
      code: 'UNAVAILABLE',
      model: 'm',
      endpoint: 'h:1',
      requestId: 'r',
    });
    expect(new InfergateError('INVALID_ARGUMENT', 'bad').retryable).toBe(false);
    expect(new InfergateError('QUEUE_FULL', 'busy').backpressure).toBe(true);
  });

  it('is recognised across package copies by its brand', () => {
    const foreign = Object.assign(Object.create(Error.prototype), {
      [Symbol.for('@infergate/core/InfergateError')]: true,
    });
    expect(foreign instanceof InfergateError).toBe(true);
    expect(new Error('x') instanceof InfergateError).toBe(false);
  });

  it('maps AbortError and TimeoutError', () => {
    expect(InfergateError.from(new DOMException('stop', 'AbortError')).code).toBe('CANCELLED');
    expect(InfergateError.from(new DOMException('late', 'TimeoutError')).code).toBe('DEADLINE_EXCEEDED');
    expect(InfergateError.from('boom').code).toBe('UNKNOWN');
    const controller = new AbortController();
    controller.abort();
    expect(abortError(controller.signal).code).toBe('CANCELLED');
    expect(abortError(AbortSignal.abort(new DOMException('t', 'TimeoutError'))).code).toBe(
      'DEADLINE_EXCEEDED',
    );
  });
});

describe('InfergateError.from', () => {
  it('maps Node socket and DNS failures, walking cause, to UNAVAILABLE', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const error = InfergateError.from(new TypeError('fetch failed', { cause: refused }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(InfergateError.from('getaddrinfo ENOTFOUND example.invalid').code).toBe('UNAVAILABLE');
    expect(InfergateError.from(new Error('plain')).code).toBe('UNKNOWN');
    expect(InfergateError.from(new Error('plain'), 'INTERNAL').code).toBe('INTERNAL');
  });
});

describe('InfergateError.wrap', () => {
  const original = new InfergateError('RATE_LIMITED', 'slow down', {
    cause: new Error('inner'),
    model: 'm',
    endpoint: 'h:1',
    requestId: 'r',
    grpcCode: 8,
    httpStatus: 429,
    retryAfterMs: 1500,
    details: { provider: 'p' },
  });

  it('keeps every field it is not told to change', () => {
    const wrapped = InfergateError.wrap(original, { endpoint: 'h:2' });
    expect(wrapped).not.toBe(original);
    expect(wrapped.toJSON()).toEqual({ ...original.toJSON(), endpoint: 'h:2' });
    expect(wrapped.cause).toBe(original.cause);
    expect(wrapped.details).toEqual({ provider: 'p' });
  });

  it('follows an overridden code for retryable unless retryable is given', () => {
    expect(InfergateError.wrap(original, { code: 'INVALID_ARGUMENT' }).retryable).toBe(false);
    expect(InfergateError.wrap(original, { retryable: false }).retryable).toBe(false);
    expect(InfergateError.wrap(original, { message: 'again' }).message).toBe('[RATE_LIMITED] again');
  });

  it('turns anything thrown into an InfergateError first', () => {
    const wrapped = InfergateError.wrap(new DOMException('late', 'TimeoutError'), { model: 'x' });
    expect(wrapped.code).toBe('DEADLINE_EXCEEDED');
    expect(wrapped.model).toBe('x');
  });
});

describe('fromGrpcStatus', () => {
  it('maps every status number to its name', () => {
    expect(fromGrpcStatus({ code: 3, details: 'x' }).code).toBe('INVALID_ARGUMENT');
    expect(fromGrpcStatus({ code: 5, details: 'x' }).code).toBe('NOT_FOUND');
    expect(fromGrpcStatus({ code: 12, details: 'x' }).code).toBe('UNIMPLEMENTED');
    expect(fromGrpcStatus({ code: 16, details: 'x' }).code).toBe('UNAUTHENTICATED');
    expect(fromGrpcStatus({ code: 4, details: 'x' }).grpcCode).toBe(4);
  });

  it("turns Triton's full-queue answer into QUEUE_FULL backpressure", () => {
    const error = fromGrpcStatus({ code: 14, details: 'Exceeds maximum queue size' }, { model: 'm' });
    expect(error.code).toBe('QUEUE_FULL');
    expect(error.backpressure).toBe(true);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("model 'm'");
  });

  it("maps Triton's restricted-API, server-timeout and size-limit answers", () => {
    const restricted = fromGrpcStatus({
      code: 14,
      details: "This protocol is restricted, expecting header 'triton-grpc-protocol-triton-access-token'",
    });
    expect(restricted.code).toBe('PERMISSION_DENIED');
    expect(restricted.retryable).toBe(false);
    expect(fromGrpcStatus({ code: 14, details: 'Request timeout expired' }).code).toBe('DEADLINE_EXCEEDED');
    const tooLarge = fromGrpcStatus({
      code: 8,
      details: 'Received message larger than max (5000000 vs. 4194304)',
    });
    expect(tooLarge.code).toBe('INVALID_ARGUMENT');
    expect(tooLarge.retryable).toBe(false);
  });

  it('recognises Node network errors in text and causes', () => {
    expect(networkErrorCode('No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1')).toBe(
      'UNAVAILABLE',
    );
    expect(networkErrorCode(new Error('fetch failed', { cause: { code: 'ENOTFOUND' } }))).toBe('UNAVAILABLE');
    expect(networkErrorCode(new Error('nothing'))).toBeUndefined();
  });
});

describe('messages over the size limit', () => {
  it('grpc-js send-side and receive-side wording are INVALID_ARGUMENT, not retryable, naming the option', () => {
    for (const details of [
      'Attempted to send message with a size larger than 4194304',
      'Received message larger than max (5000000 vs. 4194304)',
    ]) {
      const error = fromGrpcStatus({ code: 8, details });
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain('maxMessageBytes');
    }
  });
});

describe('an HTTP port given as the gRPC url', () => {
  it("grpc-js's protocol error is FAILED_PRECONDITION, not retryable, with the port hint", () => {
    const error = fromGrpcStatus(
      {
        code: 14,
        details:
          'No connection established. Last error: Protocol error (2026-12-01T02:45:43.315Z). Resolution note: ',
      },
      { endpoint: '127.0.0.1:8000' },
    );
    expect(error.code).toBe('FAILED_PRECONDITION');
    expect(error.retryable).toBe(false);
    expect(error.rawMessage).toContain("this looks like an HTTP port; Triton's gRPC port is usually 8001");
    expect(error.rawMessage).toContain('127.0.0.1:8000');
  });
});
