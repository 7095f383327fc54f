// The http2 engine's HTTP/2 layer against a raw peer: GOAWAY mid-call (and the transparent retry),
// the server's RST_STREAM, PING, and frames that break the protocol (answered with GOAWAY).
import { ErrorCode } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ACK,
  answerOf,
  closeAll,
  DATA,
  END_HEADERS,
  failure,
  firstByte,
  GOAWAY,
  HEADERS,
  PING,
  type RawPeer,
  RST_STREAM,
  rawServer,
  small,
  transport,
  u32,
} from './http2-engine-raw-peer.js';

afterEach(closeAll);

describe('the http2 engine against a raw HTTP/2 peer: GOAWAY, RST_STREAM, PING and protocol errors', () => {
  it('on GOAWAY, sends a call above its last stream id once more on a new connection, finishes the others, and dials anew', async () => {
    const server = await rawServer((peer) => {
      const waiting: number[] = [];
      peer.onRequest = ({ id }) => {
        if (server.peers.length > 1 || id === 1) {
          peer.answer(id, answerOf(new Uint8Array([id])));
          return;
        }
        waiting.push(id);
        if (waiting.length < 2) return;
        const goaway = Buffer.alloc(8);
        goaway.writeUInt32BE(waiting[0] as number, 0);
        peer.send(GOAWAY, 0, 0, goaway);
        peer.answer(waiting[0] as number, answerOf(new Uint8Array([waiting[0] as number])));
      };
    });
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    const [kept, refused] = await Promise.allSettled([firstByte(made), firstByte(made)]);
    expect(kept).toEqual({ status: 'fulfilled', value: 3 });
    // Stream 5 was never processed: it went again, as stream 1 of the second connection.
    expect(refused).toEqual({ status: 'fulfilled', value: 1 });
    expect(server.peers).toHaveLength(2);
    expect(server.peers[0]?.requests.map((request) => request.id)).toEqual([1, 3, 5]);
    expect(await firstByte(made)).toBe(3);
  });

  it('fails a call refused by GOAWAY twice with UNAVAILABLE (one transparent retry, not more)', async () => {
    const server = await rawServer((peer) => {
      peer.onRequest = () => peer.send(GOAWAY, 0, 0, Buffer.alloc(8));
    });
    const made = transport(server.url);
    const error = await failure(made.infer(small));
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(error.message).toMatch(/GOAWAY/);
    expect(server.peers).toHaveLength(2);
    await expect.poll(() => made.connectivityState()).toBe('idle');
  });

  it("maps the server's RST_STREAM as gRPC does, and the connection carries on", async () => {
    // 7 is REFUSED_STREAM: never processed, so sent once more (stream 3, then 5; stream 9, then 11).
    const codes = [8, 7, 7, 1, 7];
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        const code = codes.shift();
        if (code === undefined) peer.answer(id, answerOf(new Uint8Array([id])));
        else peer.send(RST_STREAM, 0, id, u32(code));
      };
    });
    const made = transport(server.url);
    expect((await failure(made.infer(small))).code).toBe(ErrorCode.Cancelled);
    expect((await failure(made.infer(small))).code).toBe(ErrorCode.Unavailable);
    expect((await failure(made.infer(small))).code).toBe(ErrorCode.Internal);
    expect(await firstByte(made)).toBe(11);
    expect(await firstByte(made)).toBe(13);
    expect(server.peers).toHaveLength(1);
  });

  it("answers the server's PING with an ACK of the same payload", async () => {
    const server = await rawServer((peer) => {
      // After the SETTINGS frame that opens the connection (sent once setup returns).
      queueMicrotask(() => peer.send(PING, 0, 0, Buffer.from('pingpong')));
      peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([1])));
    });
    const made = transport(server.url);
    made.connectivityState(true);
    await expect
      .poll(() =>
        server.peers[0]?.frames.some(
          (frame) => frame.type === PING && frame.flags === ACK && frame.payload.toString() === 'pingpong',
        ),
      )
      .toBe(true);
  });

  it('answers a frame that breaks the protocol with GOAWAY and the error code, and fails the calls on the connection', async () => {
    const cases: [string, (peer: RawPeer, id: number) => void, number][] = [
      ['DATA on stream 0', (peer) => peer.send(DATA, 0, 0, Buffer.from([1])), 0x1],
      [
        'a header block that does not decode',
        (peer, id) => peer.send(HEADERS, END_HEADERS, id, Buffer.from([0x80])),
        0x9,
      ],
      ['a PING of 7 bytes', (peer) => peer.send(PING, 0, 0, Buffer.alloc(7)), 0x6],
      [
        'HEADERS interrupted before END_HEADERS',
        (peer, id) => {
          peer.send(HEADERS, 0, id, peer.encoder.encode([[':status', '200']]));
          peer.send(PING, 0, 0, Buffer.alloc(8));
        },
        0x1,
      ],
    ];
    for (const [, misbehave, code] of cases) {
      const server = await rawServer((peer) => {
        peer.onRequest = ({ id }) => misbehave(peer, id);
      });
      const made = transport(server.url);
      const error = await failure(made.infer(small));
      expect(error.code).toBe(ErrorCode.Internal);
      expect(error.message).toMatch(/HTTP\/2 protocol error from the server/);
      await expect
        .poll(() => server.peers[0]?.frames.find((frame) => frame.type === GOAWAY)?.payload.readUInt32BE(4))
        .toBe(code);
    }
  });
});
