import { connect } from 'node:net';
import { ErrorCode, InfergateError } from '../errors.js';
import { HTTP_PORT_HINT } from '../grpc-status.js';
import type { Endpoint } from '../options.js';

const PROBE_TIMEOUT_MS = 1000;
/**
 * grpc-js's text when the peer closed the connection before HTTP/2 settled: Triton's HTTP port
 * (8000) does this to an HTTP/2 preface. So does a server going away, hence the probe below.
 */
const FAILED_CONNECT = /Last error: Failed to connect/;

/**
 * Asks `host:port` a one-line HTTP/1 question and reads the first 8 bytes of the answer: true if
 * they are an HTTP/1 status line. Bounded by a timeout; any failure is false.
 */
export function answersHttp1(endpoint: Endpoint, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    let received = '';
    const socket = connect({ host: endpoint.host, port: endpoint.port });
    const done = (value: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => {
      socket.write(`GET / HTTP/1.1\r\nHost: ${endpoint.host}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.length >= 8) done(received.startsWith('HTTP/1.'));
    });
    socket.once('error', () => done(false));
    socket.once('close', () => done(received.startsWith('HTTP/1.')));
  });
}

/**
 * For an UNAVAILABLE "Failed to connect" on a plaintext single endpoint: if the port answers
 * HTTP/1, the url names an HTTP port — a configuration mistake, FAILED_PRECONDITION and not
 * retryable. Otherwise the error is returned as it was.
 */
export async function explainFailedConnect(
  error: InfergateError,
  endpoints: readonly Endpoint[],
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
  if (!(await answersHttp1(endpoint))) return error;
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
