import { describe, expect, it } from 'vitest';
import { ErrorCode, InfergateError } from '../errors.js';
import { fromFetchFailure, fromHttpStatus } from './http-status.js';

describe('fromHttpStatus', () => {
  it('maps statuses to the codes gRPC uses', () => {
    const cases: [number, string][] = [
      [400, ErrorCode.InvalidArgument],
      [401, ErrorCode.Unauthenticated],
      [403, ErrorCode.PermissionDenied],
      [404, ErrorCode.NotFound],
      [409, ErrorCode.AlreadyExists],
      [429, ErrorCode.ResourceExhausted],
      [499, ErrorCode.Cancelled],
      [500, ErrorCode.Internal],
      [501, ErrorCode.Unimplemented],
      [503, ErrorCode.Unavailable],
      [504, ErrorCode.DeadlineExceeded],
      [418, ErrorCode.InvalidArgument],
      [599, ErrorCode.Internal],
    ];
    for (const [status, code] of cases) expect(fromHttpStatus(status, '{"error":"x"}').code).toBe(code);
  });

  it("refines Triton's 400s by their wording, as over gRPC", () => {
    const full = fromHttpStatus(400, '{"error":"Exceeds maximum queue size"}');
    expect(full.code).toBe(ErrorCode.QueueFull);
    expect(full.backpressure).toBe(true);
    expect(fromHttpStatus(400, '{"error":"Request for unknown model: \'m\' is not found"}').code).toBe(
      ErrorCode.NotFound,
    );
    expect(fromHttpStatus(503, '{"error":"Request timeout expired"}').code).toBe(ErrorCode.DeadlineExceeded);
    expect(fromHttpStatus(400, '{"error":"This protocol is restricted, expecting header \'x\'"}').code).toBe(
      ErrorCode.PermissionDenied,
    );
    // A 404 or 401 keeps its own meaning whatever the text.
    expect(fromHttpStatus(401, '{"error":"Exceeds maximum queue size"}').code).toBe(
      ErrorCode.Unauthenticated,
    );
  });

  it('keeps the server text, the status, the context and Retry-After', () => {
    const error = fromHttpStatus(503, '{"error":"busy"}', { model: 'm', endpoint: 'h:1' }, 2000);
    expect(error.rawMessage).toBe("busy (model 'm' at h:1)");
    expect(error).toMatchObject({
      httpStatus: 503,
      model: 'm',
      endpoint: 'h:1',
      retryAfterMs: 2000,
      retryable: true,
    });
    expect(fromHttpStatus(502, '<html>bad gateway</html>').rawMessage).toBe('<html>bad gateway</html>');
    expect(fromHttpStatus(500, '').rawMessage).toBe('HTTP 500');
    expect(fromHttpStatus(404, '{"detail":"Not Found"}').rawMessage).toBe('Not Found');
  });
});

describe('fromFetchFailure', () => {
  it('is UNAVAILABLE for a network failure, in any runtime wording', () => {
    const node = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    expect(fromFetchFailure(node, undefined, { endpoint: 'h:1' }).code).toBe(ErrorCode.Unavailable);
    expect(fromFetchFailure(new TypeError('error sending request'), undefined, {}).code).toBe(
      ErrorCode.Unavailable,
    );
  });

  it("is the signal's typed reason when the call was aborted", () => {
    const controller = new AbortController();
    const reason = new InfergateError(ErrorCode.DeadlineExceeded, 'too slow');
    controller.abort(reason);
    expect(fromFetchFailure(new DOMException('aborted', 'AbortError'), controller.signal, {})).toBe(reason);
    const plain = new AbortController();
    plain.abort();
    expect(fromFetchFailure(new DOMException('aborted', 'AbortError'), plain.signal, {}).code).toBe(
      ErrorCode.Cancelled,
    );
  });
});
