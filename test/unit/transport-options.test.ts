import { join } from 'node:path';
import { createTritonClient, InfergateError } from '@infergate/core';
import { generateTestCertificates, runScript, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server.stop();
});

describe('TLS', () => {
  const certs = generateTestCertificates();

  it('talks TLS to a server whose certificate chains to the given CA', async () => {
    const tlsServer = await startTestServer({ tls: { key: certs.serverKey, cert: certs.serverCert } });
    const client = createTritonClient({ url: `grpcs://127.0.0.1:${tlsServer.port}`, tls: { ca: certs.ca } });
    try {
      expect(await client.serverLive()).toBe(true);
      const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [5] }]);
      expect(result.output('OUTPUT0').toArray()).toEqual([5]);
      const untrusted = createTritonClient({ url: `grpcs://127.0.0.1:${tlsServer.port}`, timeoutMs: 3000 });
      const error = await untrusted.serverLive().catch((e) => e);
      expect(error).toBeInstanceOf(InfergateError);
      expect(error.code).toBe('UNAVAILABLE');
      await untrusted.close();
    } finally {
      await client.close();
      await tlsServer.stop();
    }
  });

  it('mutual TLS: the server requires a client certificate', async () => {
    const mtlsServer = await startTestServer({
      tls: { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requireClientCert: true },
    });
    const url = `grpcs://127.0.0.1:${mtlsServer.port}`;
    const withCert = createTritonClient({
      url,
      tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey },
    });
    const withoutCert = createTritonClient({ url, tls: { ca: certs.ca }, timeoutMs: 3000 });
    try {
      expect(await withCert.serverReady()).toBe(true);
      expect((await withoutCert.serverReady().catch((e) => e)).code).toBe('UNAVAILABLE');
    } finally {
      await withCert.close();
      await withoutCert.close();
      await mtlsServer.stop();
    }
  });

  it('reads certificates from files and checks mTLS options', async () => {
    const tlsServer = await startTestServer({ tls: { key: certs.serverKey, cert: certs.serverCert } });
    const client = createTritonClient({
      url: `grpcs://127.0.0.1:${tlsServer.port}`,
      tls: { ca: join(certs.dir, 'ca.pem') },
    });
    try {
      expect(await client.serverLive()).toBe(true);
    } finally {
      await client.close();
      await tlsServer.stop();
    }
    expect(() => createTritonClient({ url: 'grpcs://h:1', tls: { cert: certs.clientCert } })).toThrow(
      /needs both cert and key/,
    );
    expect(() => createTritonClient({ url: 'grpcs://h:1', tls: { ca: '/no/such/ca.pem' } })).toThrow(
      /cannot read/,
    );
  });
});

describe('compression, headers, balancing', () => {
  it('sends gzip- and deflate-compressed requests', async () => {
    for (const compression of ['gzip', 'deflate'] as const) {
      const client = createTritonClient({ url: server.url, compression });
      try {
        const data = new Float32Array(10_000).fill(1.25);
        const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data }], {});
        expect((result.output('OUTPUT0').data as Float32Array)[9999]).toBe(1.25);
        const call = server.calls.filter((recorded) => recorded.method === 'ModelInfer').at(-1);
        expect(call?.metadata['grpc-encoding'] ?? call?.metadata['grpc-accept-encoding']).toBeDefined();
      } finally {
        await client.close();
      }
    }
  });

  it('round-robins over several endpoints', async () => {
    const second = await startTestServer();
    const client = createTritonClient({ url: [server.url, second.url] });
    try {
      const before = [server.stats('identity').requests, second.stats('identity').requests];
      for (let i = 0; i < 20; i++)
        await client.infer('identity', [{ name: 'INPUT0', datatype: 'INT8', data: [1] }]);
      expect(server.stats('identity').requests - (before[0] ?? 0)).toBeGreaterThan(0);
      expect(second.stats('identity').requests - (before[1] ?? 0)).toBeGreaterThan(0);
    } finally {
      await client.close();
      await second.stop();
    }
    expect(() => createTritonClient({ url: ['localhost:1', '127.0.0.1:2'] })).toThrow(
      /IPv4 or all IPv6 literals/,
    );
  });
});

describe('close()', () => {
  it('leaves no open handles: a process using every call kind exits by itself', async () => {
    const run = await runScript(join(root, 'test', 'unit', 'fixtures', 'close-child.ts'), {
      cwd: root,
      args: [server.url],
      killAfterMs: 10_000,
    });
    // A child still running 10 s after close() is killed: its code is then null, not 0.
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('closed');
  }, 20_000);
});
