import { ErrorCode } from './errors.js';

/** Node socket and DNS error codes → our codes. The one place that knows them. */
const byNodeCode: Readonly<Record<string, ErrorCode>> = {
  ECONNREFUSED: ErrorCode.Unavailable,
  ECONNRESET: ErrorCode.Unavailable,
  ECONNABORTED: ErrorCode.Unavailable,
  EPIPE: ErrorCode.Unavailable,
  ENOTFOUND: ErrorCode.Unavailable,
  EAI_AGAIN: ErrorCode.Unavailable,
  EHOSTUNREACH: ErrorCode.Unavailable,
  ENETUNREACH: ErrorCode.Unavailable,
  ETIMEDOUT: ErrorCode.Unavailable,
  UND_ERR_SOCKET: ErrorCode.Unavailable,
  UND_ERR_CONNECT_TIMEOUT: ErrorCode.Unavailable,
  // TLS: the peer's certificate could not be verified (grpc-js reports these as UNAVAILABLE too).
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ErrorCode.Unavailable,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: ErrorCode.Unavailable,
  DEPTH_ZERO_SELF_SIGNED_CERT: ErrorCode.Unavailable,
  SELF_SIGNED_CERT_IN_CHAIN: ErrorCode.Unavailable,
  CERT_HAS_EXPIRED: ErrorCode.Unavailable,
  ERR_TLS_CERT_ALTNAME_INVALID: ErrorCode.Unavailable,
  UND_ERR_HEADERS_TIMEOUT: ErrorCode.DeadlineExceeded,
  UND_ERR_BODY_TIMEOUT: ErrorCode.DeadlineExceeded,
};

const codePattern = new RegExp(`\\b(${Object.keys(byNodeCode).join('|')})\\b`);

/**
 * Finds a Node network failure in an error (walking `cause`) or in a message text, and returns the
 * code it stands for; undefined if there is none.
 */
export function networkErrorCode(error: unknown): ErrorCode | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (typeof current === 'string') {
      const match = codePattern.exec(current);
      return match ? byNodeCode[match[1] as string] : undefined;
    }
    if (typeof current === 'object') {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string' && byNodeCode[code] !== undefined) return byNodeCode[code];
      const message = (current as { message?: unknown }).message;
      if (typeof message === 'string') {
        const match = codePattern.exec(message);
        if (match) return byNodeCode[match[1] as string];
      }
      current = (current as { cause?: unknown }).cause;
    } else return undefined;
  }
  return undefined;
}
