import { createServer, connect as netConnect, type Server } from 'node:net';
import { createTritonClient, ErrorCode, type TritonClient } from '@infergate/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFaultProxy, type FaultProxy } from './fault-proxy.js';
import { startTestServer, type TestServer } from './test-server.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rig(): Promise<{ server: TestServer; proxy: FaultProxy; client: TritonClient }> {
  const server = await startTestServer();
  cleanups.push(() => server.stop());
  const proxy = await createFaultProxy({ target: server.url });
  cleanups.push(() => proxy.close());
  const client = createTritonClient({
    url: proxy.url,
    enableGpuIpc: false,
    channelOptions: { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 100 },
  });
  cleanups.push(() => client.close());
  return { server, proxy, client };
}

const identity = (client: TritonClient, values = 16, timeoutMs = 2_000) =>
  client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: new Float32Array(values) }], {
    timeoutMs,
  });

/** A TCP server that answers every connection with `size` bytes, for byte-exact checks. */
/** Waits (on the event loop's check phase, not on timers, which a test may have frozen) until `done()`, 10 s at most. */
async function until(done: () => boolean): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!done()) {
    if (performance.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function byteServer(size: number): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.end(Buffer.alloc(size, 7));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return server;
}

/**
 * Reads what one connection to `port` receives, and whether it ended with an error (a reset).
 * It reads into a 1,000-byte buffer, a divisor of every size read here: when the last bytes and the
 * reset reach the socket before it is polled, libuv takes a read shorter than its buffer followed by
 * the hang-up for an end of stream without reading the error, so a reader with a larger buffer
 * sees an orderly end now and then (4 in 300 under load); full reads make it read the reset.
 */
function readAll(port: number): Promise<{ bytes: number; error: string | undefined }> {
  return new Promise((resolve) => {
    let bytes = 0;
    const onread = {
      buffer: Buffer.alloc(1_000),
      callback: (size: number) => {
        bytes += size;
        return true; // keep reading
      },
    };
    const socket = netConnect({ host: '127.0.0.1', port, onread });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve({ bytes, error: error.code }));
    socket.on('end', () => resolve({ bytes, error: undefined }));
  });
}

describe('createFaultProxy', () => {
  it('passes calls through to the target', async () => {
    const { server, proxy, client } = await rig();
    expect((await identity(client)).output('OUTPUT0').shape).toEqual([16]);
    expect(server.executions('identity')).toBe(1);
    expect(proxy.accepted).toBeGreaterThan(0);
  });

  it('refuses connections, then serves again on the same port', async () => {
    const { proxy, client } = await rig();
    await identity(client);
    await proxy.set({ kind: 'refuse' });
    await expect(identity(client)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    await proxy.set({ kind: 'pass' });
    await expect
      .poll(
        () =>
          identity(client).then(
            () => 'ok',
            () => 'failed',
          ),
        { timeout: 5_000 },
      )
      .toBe('ok');
  });

  it('resets open connections', async () => {
    const { proxy, client } = await rig();
    await identity(client);
    await proxy.set({ kind: 'reset' });
    await expect(identity(client)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    await expect.poll(() => proxy.connections).toBe(0);
  });

  it('blackholes: the call reaches nobody and ends at its deadline', async () => {
    const { server, proxy, client } = await rig();
    await identity(client);
    const before = server.executions('identity');
    await proxy.set({ kind: 'blackhole' });
    await expect(identity(client, 16, 300)).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded });
    expect(server.executions('identity')).toBe(before);
    expect(proxy.connections).toBe(1); // accepted, silent
  });

  it('delays: a deadline shorter than the delay passes, a longer one does not matter', async () => {
    const { proxy, client } = await rig();
    await identity(client);
    await proxy.set({ kind: 'delay', ms: 1_000 });
    await expect(identity(client, 16, 200)).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded });
    await expect(identity(client, 16, 10_000)).resolves.toBeDefined();
  });

  it('truncates an answer mid-message and resets the connection', async () => {
    const target = await byteServer(100_000);
    const address = target.address() as { port: number };
    const proxy = await createFaultProxy({ target: `127.0.0.1:${address.port}` });
    cleanups.push(() => proxy.close());
    expect(await readAll(proxy.port)).toEqual({ bytes: 100_000, error: undefined });
    await proxy.set({ kind: 'truncate', afterBytes: 1_000 });
    expect(await readAll(proxy.port)).toEqual({ bytes: 1_000, error: 'ECONNRESET' });
  });

  it('throttles each connection to the given rate', async () => {
    const target = await byteServer(3_000);
    const address = target.address() as { port: number };
    const proxy = await createFaultProxy({ target: `127.0.0.1:${address.port}` });
    cleanups.push(() => proxy.close());
    await proxy.set({ kind: 'throttle', bytesPerSecond: 10_000 });
    // The proxy's clock is frozen, so each slice leaves only when the test moves it one 10 ms tick:
    // what arrived is then exactly the slices released so far, however late the reads are.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let received = 0;
      let ended = false;
      const socket = netConnect({ host: '127.0.0.1', port: proxy.port });
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      socket.on('end', () => {
        ended = true;
      });
      for (let slice = 1; slice <= 30; slice++) {
        await until(() => received >= slice * 100);
        // 100 bytes per 10 ms tick: no more than the slices released.
        expect(received).toBe(slice * 100);
        vi.advanceTimersByTime(10);
      }
      await until(() => ended);
      expect(received).toBe(3_000);
    } finally {
      vi.useRealTimers();
    }
  });
});
