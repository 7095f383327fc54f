import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM texts for a throwaway CA, a server certificate and a client certificate. */
export interface TestCertificates {
  /** The CA certificate both sides trust. */
  ca: string;
  /** Server key and certificate, valid for 127.0.0.1, ::1 and localhost. */
  serverKey: string;
  serverCert: string;
  /** Client key and certificate for mutual TLS (CN=infergate-test-client). */
  clientKey: string;
  clientCert: string;
  /** The directory holding the .pem files. */
  dir: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function issue(dir: string, name: string, subject: string, extensions: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    subject,
    '-out',
    `${name}.csr`,
  ]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-sha256',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  ]);
}

/**
 * Makes a CA, a server certificate (SAN 127.0.0.1, ::1, localhost) and a client certificate with
 * the `openssl` CLI, in `dir` (default: a new temporary directory). For TLS and mTLS tests:
 * `startTestServer({ tls: { key: serverKey, cert: serverCert, ca, requireClientCert: true } })`.
 */
export function generateTestCertificates(dir?: string): TestCertificates {
  const where = dir ?? mkdtempSync(join(tmpdir(), 'infergate-certs-'));
  openssl(where, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=infergate-test-ca',
  ]);
  issue(
    where,
    'server',
    '/CN=localhost',
    'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  issue(where, 'client', '/CN=infergate-test-client', 'extendedKeyUsage=clientAuth\n');
  const read = (file: string) => readFileSync(join(where, file), 'utf8');
  return {
    ca: read('ca.pem'),
    serverKey: read('server.key'),
    serverCert: read('server.pem'),
    clientKey: read('client.key'),
    clientCert: read('client.pem'),
    dir: where,
  };
}
