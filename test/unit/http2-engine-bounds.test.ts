// The http2 engine's HTTP/2 layer against a raw peer: every size and wait it takes from the server is
// bounded. The server's MAX_HEADER_LIST_SIZE holds our metadata back before anything is sent; the
// header blocks we take are bounded in decoded size, in bytes and in frames; a server that never
// sends SETTINGS, or never closes a connection we ended, is not waited for.
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { ErrorCode } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSE_LOST, type StreamHandler } from '../../packages/core/src/h2/h2-stream.js';
import {
  answerOf,
  CONTINUATION,
  cleanups,
  closeAll,
  END_HEADERS,
  encodeFrame,
  failure,
  firstByte,
  GOAWAY,
  grpcFrame,
  HEADERS,
  PING,
  RawPeer,
  RST_STREAM,
  rawServer,
  recordingSession,
  SETTINGS,
  SETTINGS_MAX_HEADER_LIST_SIZE,
  small,
  transport,
  u32,
} from './http2-engine-raw-peer.js';

afterEach(closeAll);

/** A TCP server that calls `onSocket` for each connection and keeps it open until the test ends. */
async function tcpServer(onSocket: (socket: Socket) => void, allowHalfOpen = false): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

describe('the http2 engine against a raw HTTP/2 peer: bounds', () => {
  it("fails a call whose metadata is over the server's MAX_HEADER_LIST_SIZE with INVALID_ARGUMENT, never sending it", async () => {
    const server = await rawServer(
      (peer) => {
        peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([id])));
      },
      [[SETTINGS_MAX_HEADER_LIST_SIZE, 1024]],
    );
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    // Within the limit: sent as usual.
    const fits = await made.infer(small, { headers: { 'x-note': 'n'.repeat(300) } });
    expect(fits.outputs[0]?.raw?.[0]).toBe(3);
    const error = await failure(made.infer(small, { headers: { 'x-note': 'n'.repeat(2000) } }));
    expect(error.code).toBe(ErrorCode.InvalidArgument);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/SETTINGS_MAX_HEADER_LIST_SIZE of 1024: the call was not sent/);
    // It never took a stream id, and the connection carries on.
    expect(await firstByte(made)).toBe(5);
    const peer = server.peers[0] as RawPeer;
    expect(peer.frames.filter((frame) => frame.type === HEADERS)).toHaveLength(3);
    expect(server.peers).toHaveLength(1);
  });

  it('announces its own MAX_HEADER_LIST_SIZE and fails only the stream whose headers decode to more', async () => {
    const big = 'v'.repeat(4000);
    let smallBlock = Number.POSITIVE_INFINITY;
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        if (id !== 3) {
          // The first answer puts a 4 KB field in the server's table (the block decodes to 4 KB).
          const fields: [string, string][] = id === 1 ? [['x-big', big]] : [];
          peer.send(
            HEADERS,
            END_HEADERS,
            id,
            peer.encoder.encode(
              [[':status', '200'], ['content-type', 'application/grpc'], ...fields],
              (name) => name.startsWith('x-'),
            ),
          );
          peer.send(0x0, 0, id, grpcFrame(answerOf(new Uint8Array([id]))));
          peer.send(HEADERS, END_HEADERS | 0x1, id, peer.encoder.encode([['grpc-status', '0']]));
          return;
        }
        // Twenty references to it: a few bytes on the wire, 80 KB decoded.
        const block = peer.encoder.encode([
          [':status', '200'],
          ...Array.from({ length: 20 }, () => ['x-big', big] as [string, string]),
        ]);
        smallBlock = block.byteLength;
        peer.send(HEADERS, END_HEADERS, id, block);
      };
    });
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    const error = await failure(made.infer(small));
    expect(smallBlock).toBeLessThan(100);
    expect(error.code).toBe(ErrorCode.Internal);
    expect(error.message).toMatch(/a header block that decodes to over 65536 bytes/);
    const peer = server.peers[0] as RawPeer;
    await expect
      .poll(() =>
        peer.frames.find((frame) => frame.type === RST_STREAM && frame.id === 3)?.payload.readUInt32BE(0),
      )
      .toBe(0x1);
    // The table followed the whole block: the next answer decodes, on the same connection.
    expect(await firstByte(made)).toBe(5);
    expect(server.peers).toHaveLength(1);
    const ours = peer.frames.find((frame) => frame.type === SETTINGS);
    const pairs = new Map<number, number>();
    for (let at = 0; at < (ours?.payload.byteLength ?? 0); at += 6) {
      pairs.set(ours?.payload.readUInt16BE(at) as number, ours?.payload.readUInt32BE(at + 2) as number);
    }
    expect(pairs.get(SETTINGS_MAX_HEADER_LIST_SIZE)).toBe(65_536);
  });

  it('ends the connection with GOAWAY when a header block runs over 64 KiB or over 64 frames', async () => {
    const cases: [(peer: RawPeer, id: number) => void, number, RegExp][] = [
      [
        (peer, id) => {
          peer.send(HEADERS, 0, id, Buffer.alloc(40_000, 0x82));
          peer.send(CONTINUATION, 0, id, Buffer.alloc(40_000, 0x82));
        },
        0x1,
        /a header block over 65536 bytes/,
      ],
      [
        (peer, id) => {
          peer.send(HEADERS, 0, id, peer.encoder.encode([[':status', '200']]));
          for (let i = 0; i < 100; i++) peer.send(CONTINUATION, 0, id);
        },
        0xb,
        /a header block in over 64 frames/,
      ],
    ];
    for (const [misbehave, code, text] of cases) {
      const server = await rawServer((peer) => {
        peer.onRequest = ({ id }) => misbehave(peer, id);
      });
      const made = transport(server.url);
      const error = await failure(made.infer(small));
      expect(error.code).toBe(ErrorCode.Internal);
      expect(error.message).toMatch(text);
      await expect
        .poll(() => server.peers[0]?.frames.find((frame) => frame.type === GOAWAY)?.payload.readUInt32BE(4))
        .toBe(code);
    }
  });

  it('fails the dial, and every stream on it, when the server sends no SETTINGS within the timeout', async () => {
    const port = await tcpServer(() => {});
    const { session: made, seen } = recordingSession(port, 100);
    const closes: [number, string][] = [];
    const handler: StreamHandler = {
      onHeaders() {},
      onData() {},
      onClose(kind, _code, message) {
        closes.push([kind, message]);
      },
    };
    made.request(handler, '/x/Y', undefined, undefined, [grpcFrame(new Uint8Array([1]))]);
    await expect.poll(() => seen.closed, { timeout: 10_000 }).toBe(true);
    expect(seen.ready).toBe(false);
    expect(seen.error?.message).toBe('Failed to connect (no HTTP/2 SETTINGS from the server within 100 ms)');
    expect(closes).toEqual([
      [CLOSE_LOST, 'Failed to connect (no HTTP/2 SETTINGS from the server within 100 ms)'],
    ]);
  });

  it('closes a connection it ended after GOAWAY when the server never closes its side', async () => {
    let peer: RawPeer | undefined;
    const port = await tcpServer((socket) => {
      peer = new RawPeer(socket, 4096);
      peer.settings([]);
    }, true);
    const { seen } = recordingSession(port);
    await expect.poll(() => seen.ready, { timeout: 10_000 }).toBe(true);
    (peer as RawPeer).send(GOAWAY, 0, 0, Buffer.concat([u32(0), u32(0)]));
    await expect.poll(() => seen.draining, { timeout: 10_000 }).toBe(true);
    // The server keeps its half open: the session does not wait for it.
    await expect.poll(() => seen.closed, { timeout: 10_000 }).toBe(true);
    expect(seen.error).toBeUndefined();
  });

  it('ends the connection when the server sends PINGs but never reads the answers', async () => {
    // An in-memory socket whose writes never reach the server: every answer stays unflushed.
    const socket = new Duplex({ read() {}, write() {} });
    const { seen } = recordingSession(0, undefined, socket as unknown as Socket);
    socket.push(encodeFrame(SETTINGS, 0, 0));
    await expect.poll(() => seen.ready, { timeout: 10_000 }).toBe(true);
    socket.push(Buffer.concat(Array.from({ length: 1001 }, () => encodeFrame(PING, 0, 0, Buffer.alloc(8)))));
    await expect.poll(() => seen.closed, { timeout: 10_000 }).toBe(true);
    expect(seen.error?.message).toBe(
      'HTTP/2 protocol error from the server: the server sends PING or SETTINGS frames but does not read our answers (1000 unsent) (ENHANCE_YOUR_CALM)',
    );
  });
});
