import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { createTritonClient } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVER_READ_BUFFER_BYTES, withReusedReadBuffer } from './reused-read-socket.js';
import { startTestServer } from './test-server.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  }
});

/** A paused-accept server whose connections are moved by `withReusedReadBuffer`, and a client. */
async function adoptedPair(): Promise<{ server: Server; adopted: Socket; client: Socket }> {
  const server = createServer({ pauseOnConnect: true });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect((server.address() as { port: number }).port, '127.0.0.1');
  const [socket] = await accepted;
  return { server, adopted: withReusedReadBuffer(socket, server), client };
}

describe('withReusedReadBuffer', () => {
  it('reads a connection into one reused buffer, every byte intact and in order', async () => {
    const { adopted, client } = await adoptedPair();
    const sent = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let index = 0; index < sent.byteLength; index++) sent[index] = (index * 7 + (index >> 12)) & 0xff;
    const received = Buffer.alloc(sent.byteLength);
    let filled = 0;
    const backings = new Set<ArrayBufferLike>();
    adopted.on('data', (chunk: Buffer) => {
      backings.add(chunk.buffer);
      // Valid only during the event: copied out here, as the lean session's readers do.
      chunk.copy(received, filled);
      filled += chunk.byteLength;
    });
    try {
      client.end(sent);
      await once(adopted, 'end');
      expect(filled).toBe(sent.byteLength);
      expect(received.equals(sent)).toBe(true);
      expect(backings.size).toBe(1);
      expect([...backings][0]?.byteLength).toBeGreaterThanOrEqual(SERVER_READ_BUFFER_BYTES);
    } finally {
      adopted.destroy();
      client.destroy();
    }
  });

  it('writes back on the same connection', async () => {
    const { adopted, client } = await adoptedPair();
    adopted.on('data', (chunk: Buffer) => adopted.write(Buffer.from(chunk.toString().toUpperCase())));
    try {
      client.write('ping');
      const [answer] = (await once(client, 'data')) as [Buffer];
      expect(answer.toString()).toBe('PING');
    } finally {
      adopted.destroy();
      client.destroy();
    }
  });

  it("keeps the server's count of open connections: close() waits for the moved connection", async () => {
    const { server, adopted, client } = await adoptedPair();
    const count = () => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));
    expect(await count()).toBe(1);
    let closed = false;
    const serverClosed = new Promise<void>((resolve) =>
      server.close(() => {
        closed = true;
        resolve();
      }),
    );
    // The listening socket is gone but the connection is open: no 'close' yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    expect(await count()).toBe(1);
    adopted.destroy();
    client.destroy();
    await serverClosed;
    expect(closed).toBe(true);
  });

  it('resumes and returns a socket it cannot move (no native handle)', () => {
    const server = createServer();
    const stream = new PassThrough();
    stream.pause();
    const socket = withReusedReadBuffer(stream as unknown as Socket, server);
    expect(socket).toBe(stream);
    expect(stream.readableFlowing).toBe(true);
  });

  it('serves concurrent 1 MiB calls with each answer its own request, byte for byte', async () => {
    const server = await startTestServer();
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const elements = 262_144;
      const answers = await Promise.all(
        Array.from({ length: 24 }, async (_, call) => {
          const data = new Float32Array(elements);
          for (let index = 0; index < elements; index++) data[index] = call * 1_000_000 + index;
          const result = await client.infer('identity', [
            { name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data },
          ]);
          const output = result.outputs[0]?.data as Float32Array;
          return output.every((value, index) => value === data[index]);
        }),
      );
      expect(answers).toEqual(Array.from({ length: 24 }, () => true));
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
