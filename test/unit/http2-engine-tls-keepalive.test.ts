// The http2 engine's connections over TLS and mutual TLS, and its keepalive pings.
import { createServer } from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createGrpcTransport, ErrorCode, InfergateError, InferResult } from '@infergate/core';
import { generateTestCertificates, type TestCertificates } from '@infergate/testing';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  cleanups,
  closeAll,
  h2Client,
  identity,
  referenceServer,
  watch,
} from './http2-engine-test-servers.js';

afterEach(closeAll);

/** Waits for `condition` on real time (setImmediate turns, at most 10 s), whatever the fake clock. */
async function untilReal(condition: () => boolean): Promise<void> {
  const bound = performance.now() + 10_000;
  while (!condition()) {
    if (performance.now() > bound) throw new Error('the condition did not hold within 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('TLS and keepalive on the http2 engine', () => {
  let certs: TestCertificates;
  beforeAll(() => {
    certs = generateTestCertificates();
  });

  it('infers over TLS with the given CA, checks the name given as serverName, and refuses an untrusted server', async () => {
    const server = await referenceServer({ tls: { key: certs.serverKey, cert: certs.serverCert } });
    const client = h2Client(`grpcs://${server.url}`, { tls: { ca: certs.ca } });
    expect(new InferResult(await client.grpc.infer(identity(5))).output('OUTPUT0').data[0]).toBe(5);
    expect(client.grpc.connectivityState()).toBe('ready');
    const named = h2Client(`grpcs://${server.url}`, { tls: { ca: certs.ca, serverName: 'localhost' } });
    expect(new InferResult(await named.grpc.infer(identity(6))).output('OUTPUT0').data[0]).toBe(6);
    const wrongName = h2Client(`grpcs://${server.url}`, {
      tls: { ca: certs.ca, serverName: 'elsewhere.test' },
    });
    const untrusted = h2Client(`grpcs://${server.url}`); // system roots only
    for (const refused of [wrongName, untrusted]) {
      const error = await refused.grpc.infer(identity(1)).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
      await expect.poll(() => refused.grpc.connectivityState()).toBe('transient-failure');
    }
  });

  it('presents the client certificate for mutual TLS; without it the server refuses', async () => {
    const server = await referenceServer({
      tls: { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requireClientCert: true },
    });
    const good = h2Client(`grpcs://${server.url}`, {
      tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey },
    });
    expect(new InferResult(await good.grpc.infer(identity(8))).output('OUTPUT0').data[0]).toBe(8);
    const anonymous = h2Client(`grpcs://${server.url}`, { tls: { ca: certs.ca } });
    const error = await anonymous.grpc.infer(identity(1)).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
    expect(server.calls.filter((call) => call.method === 'ModelInfer')).toHaveLength(1);
  });

  it('sends keepalive pings while idle when permitWithoutCalls is on', async () => {
    const server = createServer();
    let pings = 0;
    server.on('session', (session) => session.on('ping', () => pings++));
    server.on('stream', (stream) =>
      stream.respond({ ':status': 200, 'grpc-status': '12' }, { endStream: true }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const transport = createGrpcTransport({
      url: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      engine: 'http2',
      enableGpuIpc: false,
      keepalive: { timeMs: 50, timeoutMs: 5000, permitWithoutCalls: true },
    });
    cleanups.push(() => transport.close());
    transport.connectivityState(true);
    await expect.poll(() => pings).toBeGreaterThanOrEqual(2);
    expect(transport.connectivityState()).toBe('ready');
  });

  it('closes a connection whose keepalive ping is not answered, and reports it lost', async () => {
    // Speaks just enough HTTP/2 to be ready (its SETTINGS frame), then never answers anything.
    const sockets = new Set<Socket>();
    let closedByClient = 0;
    const silent: Server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => {});
      socket.on('close', () => {
        closedByClient++;
        sockets.delete(socket);
      });
      socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const transport = createGrpcTransport({
      url: `127.0.0.1:${(silent.address() as AddressInfo).port}`,
      engine: 'http2',
      enableGpuIpc: false,
      keepalive: { timeMs: 50, timeoutMs: 100, permitWithoutCalls: true },
    });
    cleanups.push(() => transport.close());
    const changes = watch(transport);
    transport.connectivityState(true);
    await expect.poll(() => changes).toContainEqual({ from: 'connecting', to: 'ready' });
    await expect.poll(() => changes).toContainEqual({ from: 'ready', to: 'idle' });
    await expect.poll(() => closedByClient).toBeGreaterThanOrEqual(1);
  });

  it('waits a keepalive timeoutMs beyond 2^31 − 1 ms for the ping answer, and closes when it is due', async () => {
    // Ready (its SETTINGS frame), then answers nothing; counts the PINGs it reads.
    const sockets = new Set<Socket>();
    let pings = 0;
    const silent: Server = createTcpServer((socket) => {
      sockets.add(socket);
      let pending = Buffer.alloc(0);
      let prefaceLeft = 24;
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        const skip = Math.min(prefaceLeft, pending.length);
        prefaceLeft -= skip;
        pending = pending.subarray(skip);
        while (prefaceLeft === 0 && pending.length >= 9) {
          const length = pending.readUIntBE(0, 3);
          if (pending.length < 9 + length) break;
          if (pending[3] === 6 && ((pending[4] as number) & 1) === 0) pings++;
          pending = pending.subarray(9 + length);
        }
      });
      socket.on('close', () => sockets.delete(socket));
      socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    // The ping's timeout on the fake clock; the keepalive interval (50 ms) and the sockets on real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    cleanups.push(() => {
      vi.useRealTimers();
    });
    const transport = createGrpcTransport({
      url: `127.0.0.1:${(silent.address() as AddressInfo).port}`,
      engine: 'http2',
      enableGpuIpc: false,
      keepalive: { timeMs: 50, timeoutMs: 3e9, permitWithoutCalls: true },
    });
    cleanups.push(() => transport.close());
    const changes = watch(transport);
    transport.connectivityState(true);
    // Polled on real time: expect.poll would move the fake clock.
    await untilReal(() => pings === 1);
    await vi.advanceTimersByTimeAsync(2 ** 31);
    await vi.advanceTimersByTimeAsync(3e9 - 2 ** 31 - 1);
    expect(changes).not.toContainEqual({ from: 'ready', to: 'idle' });
    expect(transport.connectivityState()).toBe('ready');
    await vi.advanceTimersByTimeAsync(1);
    await untilReal(() => transport.connectivityState() === 'idle');
    expect(changes).toContainEqual({ from: 'ready', to: 'idle' });
  });
});
