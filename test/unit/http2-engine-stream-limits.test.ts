// The http2 engine's HTTP/2 layer against a raw peer: MAX_CONCURRENT_STREAMS and the bounded queue of
// calls waiting for it, and stream ids running out.
import { ErrorCode } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { H2Engine } from '../../packages/core/src/h2/h2-engine.js';
import { CLOSE_BUSY, type StreamHandler } from '../../packages/core/src/h2/h2-stream.js';
import {
  answerOf,
  cleanups,
  closeAll,
  failure,
  firstByte,
  grpcFrame,
  type RawPeer,
  rawServer,
  recordingSession,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  small,
  transport,
} from './http2-engine-raw-peer.js';

afterEach(closeAll);

describe('the http2 engine against a raw HTTP/2 peer: stream limits', () => {
  it('keeps to MAX_CONCURRENT_STREAMS 1: further calls wait their turn, and one whose deadline passes while waiting is never sent', async () => {
    // Streams opened (HEADERS seen) and not yet answered, when each new one opens.
    let opened = 0;
    let answered = 0;
    let maxOpen = 0;
    let held: number | undefined;
    const server = await rawServer(
      (peer) => {
        peer.onHeaders = () => {
          opened++;
          maxOpen = Math.max(maxOpen, opened - answered);
        };
        peer.onRequest = (request) => {
          if (request.headers['x-hold'] === '1') {
            held = request.id;
            return;
          }
          peer.answer(request.id, answerOf(new Uint8Array([request.id])));
          answered++;
        };
      },
      [[SETTINGS_MAX_CONCURRENT_STREAMS, 1]],
    );
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    maxOpen = 0;
    const answers = await Promise.all([firstByte(made), firstByte(made), firstByte(made), firstByte(made)]);
    expect(answers).toEqual([3, 5, 7, 9]);
    expect(maxOpen).toBe(1);

    const holding = made.infer(small, { headers: { 'x-hold': '1' } });
    await expect.poll(() => held).toBe(11);
    const late = await failure(made.infer(small, { timeoutMs: 50 }));
    expect(late.code).toBe(ErrorCode.DeadlineExceeded);
    const peer = server.peers[0] as RawPeer;
    peer.answer(11, answerOf(new Uint8Array([11])));
    expect((await holding).outputs[0]?.raw?.[0]).toBe(11);
    // The expired call never took a stream id: the next one is 13.
    expect(await firstByte(made)).toBe(13);
  });

  it('fails a call over the bound of the wait queue at once with RESOURCE_EXHAUSTED-like BUSY', async () => {
    const server = await rawServer(() => {}, [[SETTINGS_MAX_CONCURRENT_STREAMS, 1]]);
    const closes: number[] = [];
    const handler: StreamHandler = {
      onHeaders() {},
      onData() {},
      onClose(kind) {
        closes.push(kind);
      },
    };
    const { session, seen } = recordingSession(server.port, undefined, undefined, 1);
    await expect.poll(() => seen.ready).toBe(true);
    const body = [grpcFrame(new Uint8Array([1]))];
    session.request(handler, '/x/Y', undefined, undefined, body);
    session.request(handler, '/x/Y', undefined, undefined, body);
    expect(closes).toEqual([]);
    session.request(handler, '/x/Y', undefined, undefined, body);
    expect(closes).toEqual([CLOSE_BUSY]);
    expect(session.activeStreams).toBe(2);
  });

  it('moves to a new connection once the stream ids run out', async () => {
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([1])));
    });
    const engine = new H2Engine(
      [{ target: server.url, host: '127.0.0.1', port: server.port, secure: false }],
      {
        secure: false,
        tls: undefined,
        compression: 'none',
        loadBalancing: 'pick_first',
        keepalive: { timeMs: 60_000, timeoutMs: 20_000, permitWithoutCalls: false },
        backoff: { initialMs: 50, maxMs: 200 },
        firstStreamId: 0x7ffffffd,
      },
    );
    cleanups.push(() => engine.close());
    const options = { path: '/x/Y', headers: {}, maxMessageBytes: 1 << 20 };
    const body = [grpcFrame(new Uint8Array([1]))];
    for (let i = 0; i < 3; i++) await engine.unary(body, options);
    expect(server.peers[0]?.requests.map((request) => request.id)).toEqual([0x7ffffffd, 0x7fffffff]);
    expect(server.peers[1]?.requests.map((request) => request.id)).toEqual([0x7ffffffd]);
  });
});
