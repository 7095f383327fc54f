// The http2 engine's HTTP/2 layer against a raw peer: flow control both ways (a 1 MiB request within a
// tiny window and the smallest frame size; receive credit held back while a call is paused).
import { afterEach, describe, expect, it } from 'vitest';
import {
  answerOf,
  closeAll,
  DATA,
  END_HEADERS,
  grpcFrame,
  HEADERS,
  type RawPeer,
  rawServer,
  recordingSession,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_FRAME_SIZE,
  small,
  transport,
  u32,
  WINDOW_UPDATE,
} from './http2-engine-raw-peer.js';

afterEach(closeAll);

describe('the http2 engine against a raw HTTP/2 peer: flow control', () => {
  it('sends a 1 MiB request within a tiny window and the smallest frame size, following a changed INITIAL_WINDOW_SIZE', async () => {
    let raised = false;
    const server = await rawServer(
      (peer) => {
        peer.onData = ({ id, payload }) => {
          peer.credit(0, payload.byteLength);
          if (!raised && peer.requests.length === 1) {
            // During the large request (the second), grow every open stream's window by SETTINGS
            // once, then by WINDOW_UPDATE as bytes arrive.
            raised = true;
            peer.settings([[SETTINGS_INITIAL_WINDOW_SIZE, 30_000]]);
          } else if (raised) peer.credit(id, payload.byteLength);
        };
        peer.onRequest = (request) => peer.answer(request.id, answerOf(u32(request.bytes)));
      },
      [
        [SETTINGS_INITIAL_WINDOW_SIZE, 1000],
        [SETTINGS_MAX_FRAME_SIZE, 16_384],
      ],
    );
    const made = transport(server.url);
    // A first call settles the settings (before them the client may use HTTP/2's default window).
    expect(Buffer.from((await made.infer(small)).outputs[0]?.raw ?? []).readUInt32BE(0)).toBeGreaterThan(0);
    const payload = new Uint8Array(1024 * 1024).map((_, index) => index % 251);
    const response = await made.infer({
      model: 'm',
      inputs: [{ name: 'IN', datatype: 'UINT8', shape: [payload.byteLength], raw: payload }],
    });
    const peer = server.peers[0] as RawPeer;
    const received = Buffer.concat(peer.requests[1]?.body ?? []);
    expect(Buffer.from(response.outputs[0]?.raw ?? []).readUInt32BE(0)).toBe(received.byteLength);
    expect(received.byteLength).toBeGreaterThan(payload.byteLength);
    // The tensor arrives whole, at the end of the request.
    expect(received.subarray(received.byteLength - payload.byteLength).equals(Buffer.from(payload))).toBe(
      true,
    );
    expect(peer.overruns).toBe(0);
    expect(peer.maxDataFrame).toBeLessThanOrEqual(16_384);
  });

  it('holds back the stream window credit while a call is paused, and gives it all back on resume', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        peer.send(HEADERS, END_HEADERS, id, peer.encoder.encode([[':status', '200']]));
        // 9 MiB: more than half the 16 MiB stream window, so an unpaused call would credit some.
        for (let i = 0; i < 9; i++) peer.send(DATA, 0, id, chunk);
      };
    });
    let received = 0;
    const { session, seen } = recordingSession(server.port);
    await expect.poll(() => seen.ready).toBe(true);
    const stream = session.request(
      {
        onHeaders() {
          session.pause(stream);
        },
        onData(data) {
          received += data.byteLength;
        },
        onClose() {},
      },
      '/x/Y',
      undefined,
      undefined,
      [grpcFrame(new Uint8Array([1]))],
    );
    await expect.poll(() => received, { timeout: 10_000 }).toBe(9 * chunk.byteLength);
    session.resume(stream);
    const peer = server.peers[0] as RawPeer;
    const streamCredit = () =>
      peer.frames
        .filter((frame) => frame.type === WINDOW_UPDATE && frame.id === 1)
        .map((frame) => frame.payload.readUInt32BE(0));
    await expect.poll(streamCredit).toEqual([9 * chunk.byteLength]);
  });
});
