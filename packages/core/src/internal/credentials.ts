import { readFileSync } from 'node:fs';
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

export function createCredentials(secure: boolean, tls: boolean | TlsFiles | undefined): ChannelCredentials {
  const { credentials } = loadGrpc();
  if (!secure) return credentials.createInsecure();
  const files = typeof tls === 'object' ? tls : {};
  const cert = loadPem(files.cert, 'cert');
  const key = loadPem(files.key, 'key');
  if ((cert === null) !== (key === null)) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'tls: mTLS needs both cert and key');
  }
  return credentials.createSsl(loadPem(files.ca, 'ca'), key, cert);
}
