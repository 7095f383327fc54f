import { connect } from 'node:net';
import { createCallScope } from '../call-scope.js';
import { ErrorCode, InfergateError } from '../errors.js';
import { HTTP_PORT_HINT } from '../grpc-status.js';
import type { Endpoint } from '../options.js';

/**
 * The probe's own bound: an HTTP/1 port answers at once, so a peer silent this long (a blackholed
 * host) is taken for not HTTP/1 and the error stands as it was.
 */
const PROBE_TIMEOUT_MS = 250;
/**
 * grpc-js's text when the peer closed the connection before HTTP/2 settled: Triton's HTTP port
 * (8000) does this to an HTTP/2 preface. So does a server going away, hence the probe below.
 */
const FAILED_CONNECT = /Last error: Failed to connect/;

export interface ProbeOptions {
  /** The caller's signal: the probe stops (false) as soon as it aborts. */
  signal?: AbortSignal | undefined;
  /** The probe's own bound, in ms. @default 250 */
  timeoutMs?: number | undefined;
}

/**
 * Asks `host:port` a one-line HTTP/1 question and reads the first 8 bytes of the answer: true if
 * they are an HTTP/1 status line. Bounded by its own timeout and the caller's signal; any failure,
 * the timeout and an abort are false.
 */
export function answersHttp1(endpoint: Endpoint, options: ProbeOptions = {}): Promise<boolean> {
  const scope = createCallScope({
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? PROBE_TIMEOUT_MS,
    what: 'the HTTP/1 probe',
  });
  // A scope with a deadline always has its own signal.
  const signal = scope.signal as AbortSignal;
  if (signal.aborted) {
    scope.dispose();
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    let received = '';
    let settled = false;
    const socket = connect({ host: endpoint.host, port: endpoint.port });
    const done = (value: boolean) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', stop);
      scope.dispose();
      socket.destroy();
      resolve(value);
    };
    const stop = () => done(false);
    signal.addEventListener('abort', stop, { once: true });
    socket.once('connect', () => {
      socket.write(`GET / HTTP/1.1\r\nHost: ${endpoint.host}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.length >= 8) done(received.startsWith('HTTP/1.'));
    });
    socket.once('error', stop);
    socket.once('close', () => done(received.startsWith('HTTP/1.')));
  });
}

/**
 * For an UNAVAILABLE "Failed to connect" on a plaintext single endpoint: if the port answers
 * HTTP/1, the url names an HTTP port — a configuration mistake, FAILED_PRECONDITION and not
 * retryable. Otherwise — the probe timed out or the caller's `signal` aborted included — the error is
 * returned as it was.
 */
export async function explainFailedConnect(
  error: InfergateError,
  endpoints: readonly Endpoint[],
  signal?: AbortSignal,
): Promise<InfergateError> {
  const [endpoint] = endpoints;
  if (
    error.code !== ErrorCode.Unavailable ||
    endpoints.length !== 1 ||
    endpoint === undefined ||
    endpoint.secure ||
    !FAILED_CONNECT.test(error.rawMessage)
  ) {
    return error;
  }
  if (!(await answersHttp1(endpoint, { signal }))) return error;
  return new InfergateError(
    ErrorCode.FailedPrecondition,
    `${endpoint.target} answers HTTP/1, not gRPC (grpc-js: ${error.rawMessage.trim()}): ${HTTP_PORT_HINT}`,
    {
      retryable: false,
      endpoint: endpoint.target,
      ...(error.model !== undefined ? { model: error.model } : {}),
      ...(error.requestId !== undefined ? { requestId: error.requestId } : {}),
      ...(error.grpcCode !== undefined ? { grpcCode: error.grpcCode } : {}),
      cause: error.cause,
    },
  );
}
