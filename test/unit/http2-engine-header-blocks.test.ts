// The http2 engine's HTTP/2 layer against a raw peer: the header blocks it reads (HEADERS split over
// CONTINUATION, padding and priority) and writes (following the peer's HEADER_TABLE_SIZE).
import { afterEach, describe, expect, it } from 'vitest';
import {
  answerOf,
  CONTINUATION,
  closeAll,
  DATA,
  END_HEADERS,
  END_STREAM,
  firstByte,
  grpcFrame,
  HEADERS,
  PADDED,
  PRIORITY,
  rawServer,
  SETTINGS_HEADER_TABLE_SIZE,
  transport,
} from './http2-engine-raw-peer.js';

afterEach(closeAll);

describe('the http2 engine against a raw HTTP/2 peer: header blocks', () => {
  it('reads headers split over HEADERS (padded, with priority) and CONTINUATION, and padded DATA', async () => {
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        const block = peer.encoder.encode(
          [
            [':status', '200'],
            ['content-type', 'application/grpc'],
            ['x-note', 'n'.repeat(300)],
          ],
          () => true,
        );
        const third = Math.floor(block.byteLength / 3);
        const pad = 4;
        peer.send(
          HEADERS,
          PADDED | PRIORITY,
          id,
          Buffer.concat([Buffer.from([pad]), Buffer.alloc(5), block.subarray(0, third), Buffer.alloc(pad)]),
        );
        peer.send(CONTINUATION, 0, id, block.subarray(third, 2 * third));
        peer.send(CONTINUATION, END_HEADERS, id, block.subarray(2 * third));
        const framed = grpcFrame(answerOf(new Uint8Array([42])));
        peer.send(
          DATA,
          PADDED,
          id,
          Buffer.concat([Buffer.from([7]), framed.subarray(0, 6), Buffer.alloc(7)]),
        );
        peer.send(DATA, PADDED, id, Buffer.concat([Buffer.from([0]), framed.subarray(6)]));
        const trailers = peer.encoder.encode([['grpc-status', '0']]);
        peer.send(
          HEADERS,
          END_HEADERS | END_STREAM | PADDED,
          id,
          Buffer.concat([Buffer.from([3]), trailers, Buffer.alloc(3)]),
        );
      };
    });
    const made = transport(server.url);
    // Twice: the second answer's headers refer to the table entries the first one added.
    expect(await firstByte(made)).toBe(42);
    expect(await firstByte(made)).toBe(42);
    const request = server.peers[0]?.requests[0];
    expect(request?.headers[':path']).toBe('/inference.GRPCInferenceService/ModelInfer');
    expect(request?.headers.te).toBe('trailers');
    expect(server.peers[0]?.requests[1]?.headers[':authority']).toBe(server.url);
  });

  it('follows a HEADER_TABLE_SIZE of 0: its header blocks then never use the dynamic table', async () => {
    const server = await rawServer(
      (peer) => {
        peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([id])));
      },
      [[SETTINGS_HEADER_TABLE_SIZE, 0]],
      0,
    );
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    expect(await firstByte(made)).toBe(3);
    expect(await firstByte(made)).toBe(5);
    expect(server.peers[0]?.decodeErrors).toBe(0);
    expect(server.peers[0]?.requests[2]?.headers[':path']).toBe('/inference.GRPCInferenceService/ModelInfer');
  });
});
