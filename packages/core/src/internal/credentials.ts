import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { ErrorCode, InfergateError } from '../errors.js';
import { loadGrpc } from './lazy-modules.js';

type Pem = string | Uint8Array;
interface TlsFiles {
  ca?: Pem | undefined;
  cert?: Pem | undefined;
  key?: Pem | undefined;
}

/** PEM text or a Buffer is used as is; any other string is read as a file path. */
export function loadPem(value: Pem | undefined, what: string): Buffer | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') return Buffer.from(value);
  if (value.includes('-----BEGIN')) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (error) {
    throw new InfergateError(ErrorCode.InvalidArgument, `tls.${what}: cannot read '${value}'`, {
      cause: error,
    });
  }
}

/** The TLS of a channel, checked: undefined for plaintext. */
export type ChannelSecurity = SecureContext | undefined;

/**
 * Checks the TLS options when the client is made, so that a missing file, a lone cert or key, or
 * PEM that does not parse fails the constructor, without grpc-js (which the http2 engine's
 * inference never needs, see lazy-modules.ts). The secure context is the one grpc-js's
 * `credentials.createSsl` would build, with its environment variables (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH,
 * GRPC_SSL_CIPHER_SUITES) and in its order, so its errors are the same; `createCredentials` hands it
 * to grpc-js when a grpc-js channel is made.
 */
export function checkChannelSecurity(secure: boolean, tls: boolean | TlsFiles | undefined): ChannelSecurity {
  if (!secure) return undefined;
  const files = typeof tls === 'object' ? tls : {};
  const cert = loadPem(files.cert, 'cert');
  const key = loadPem(files.key, 'key');
  if ((cert === null) !== (key === null)) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'tls: mTLS needs both cert and key');
  }
  const ca = loadPem(files.ca, 'ca') ?? defaultRoots();
  return createSecureContext({
    ...(ca !== null ? { ca } : {}),
    ...(key !== null ? { key } : {}),
    ...(cert !== null ? { cert } : {}),
    ciphers: process.env.GRPC_SSL_CIPHER_SUITES,
  });
}

/** grpc-js's default roots: the file GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names, else Node's own. */
function defaultRoots(): Buffer | null {
  const path = process.env.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH;
  return path ? readFileSync(path) : null;
}

/** grpc-js credentials for a channel whose TLS `checkChannelSecurity` checked. */
export function createCredentials(security: ChannelSecurity): ChannelCredentials {
  const { credentials } = loadGrpc();
  return security === undefined
    ? credentials.createInsecure()
    : credentials.createFromSecureContext(security);
}
