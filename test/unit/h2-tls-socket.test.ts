// The http2 engine's TLS connections read, like its plaintext ones, into one reused buffer (Node's
// `onread` through tls.connect): the decrypted bytes of every read arrive as views of that buffer.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:tls';
import { generateTestCertificates, type TestCertificates } from '@infergate/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectTls, READ_BUFFER_BYTES } from '../../packages/core/src/h2/h2-socket.js';

let certs: TestCertificates;
beforeAll(() => {
  certs = generateTestCertificates();
});

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A byte pattern that a chunk delivered twice, late or out of order would break. */
function pattern(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let index = 0; index < bytes; index++) out[index] = (index * 13 + (index >> 10)) & 0xff;
  return out;
}

/** A TLS server on a free port that sends `bytes` and ends; where to dial it (no CA given). */
async function serverSending(bytes: Buffer): Promise<{ host: string; port: number; servername: string }> {
  const server = createServer({ key: certs.serverKey, cert: certs.serverCert }, (socket) =>
    socket.end(bytes),
  );
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername: 'localhost' };
}

describe('connectTls', () => {
  it('reads the decrypted stream into one reused buffer, every byte intact and in order', async () => {
    const sent = pattern(3 * 1024 * 1024 + 5);
    const socket = connectTls({ ...(await serverSending(sent)), ca: certs.ca });
    const received = Buffer.alloc(sent.byteLength);
    let filled = 0;
    let reads = 0;
    const backings = new Set<ArrayBufferLike>();
    socket.on('data', (chunk: Buffer) => {
      backings.add(chunk.buffer);
      reads += 1;
      // Valid only during the event: copied out here, as the session's frame reader does.
      chunk.copy(received, filled);
      filled += chunk.byteLength;
    });
    try {
      await once(socket, 'end');
      expect(filled).toBe(sent.byteLength);
      expect(received.equals(sent)).toBe(true);
      expect(reads).toBeGreaterThan(1);
      expect(backings.size).toBe(1);
      expect([...backings][0]?.byteLength).toBeGreaterThanOrEqual(READ_BUFFER_BYTES);
    } finally {
      socket.destroy();
    }
  });

  it('still checks the certificate: an unknown CA fails the connection', async () => {
    const socket = connectTls(await serverSending(Buffer.from('x')));
    const [error] = (await once(socket, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toMatch(/CERT|SELF_SIGNED|UNABLE/);
    socket.destroy();
  });
});
