// A unary answer built ahead of its write: HEADERS, the message as DATA frames no larger than the
// peer's frame size (the first chunk uncopied when it fits), and the OK trailers, ending the stream.
import {
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FRAME_DATA,
  FRAME_HEADERS,
  MIN_MAX_FRAME_SIZE,
} from '@infergate/core/internal/grpc-frames';
import { describe, expect, it } from 'vitest';
import { OK_TRAILERS_BLOCK, RESPONSE_BLOCK } from './h2-grpc-lean-frames.js';
import { prepareReply } from './h2-grpc-lean-prepared-reply.js';

/** The frames' heads: [type, flags, stream id, length], with each DATA head's payload after it. */
function heads(frames: readonly Buffer[]): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < frames.length; i++) {
    const frame = frames[i] as Buffer;
    const length = frame.readUIntBE(0, 3);
    out.push([frame[3] as number, frame[4] as number, frame.readUInt32BE(5), length]);
    if (frame[3] === FRAME_DATA) i++; // the payload, a buffer of its own
  }
  return out;
}

describe('prepareReply', () => {
  it('splits the message at the peer frame size between the response headers and the trailers', () => {
    const max = MIN_MAX_FRAME_SIZE;
    const small = Buffer.alloc(100, 1);
    const large = Buffer.alloc(max * 2 + 5, 2);
    const prepared = prepareReply(3, [small, large], max);
    expect(prepared?.bytes).toBe(100 + max * 2 + 5);
    expect(prepared?.maxFrame).toBe(max);
    const frames = prepared?.frames ?? [];
    expect(heads(frames)).toEqual([
      [FRAME_HEADERS, FLAG_END_HEADERS, 3, RESPONSE_BLOCK.byteLength],
      [FRAME_DATA, 0, 3, 100],
      [FRAME_DATA, 0, 3, max],
      [FRAME_DATA, 0, 3, max],
      [FRAME_DATA, 0, 3, 5],
      [FRAME_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 3, OK_TRAILERS_BLOCK.byteLength],
    ]);
    // A chunk that fits in one frame goes out as it is, not copied.
    expect(frames[2]).toBe(small);
  });
});
