import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPlain, READ_BUFFER_BYTES } from './h2-socket.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

describe('connectPlain', () => {
  it('reads every chunk into one reused buffer, bytes intact', async () => {
    const server = createServer();
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const socket = connectPlain('127.0.0.1', (server.address() as { port: number }).port);
    const [peer] = await accepted;
    const seen: { backing: ArrayBufferLike; text: string }[] = [];
    socket.on('data', (chunk: Buffer) => seen.push({ backing: chunk.buffer, text: chunk.toString() }));
    try {
      // Each write waits for the previous one to be read, so they arrive as separate reads.
      for (const text of ['first', 'second', 'third']) {
        const before = seen.length;
        peer.write(text);
        while (seen.length === before) await once(socket, 'data');
      }
      expect(seen.map((entry) => entry.text).join('')).toBe('firstsecondthird');
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(new Set(seen.map((entry) => entry.backing)).size).toBe(1);
      expect(seen[0]?.backing.byteLength).toBeGreaterThanOrEqual(READ_BUFFER_BYTES);
    } finally {
      socket.destroy();
      peer.destroy();
    }
  });

  it("leaves the socket open for writing at the server's end of stream (the session closes it)", async () => {
    const server = createServer();
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const socket = connectPlain('127.0.0.1', (server.address() as { port: number }).port);
    const [peer] = await accepted;
    try {
      socket.resume();
      peer.end();
      await once(socket, 'end');
      // Node would end a socket that does not allow half-open connections by itself, in a tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(socket.allowHalfOpen).toBe(true);
      expect(socket.writableEnded).toBe(false);
    } finally {
      socket.destroy();
      peer.destroy();
    }
  });
});
