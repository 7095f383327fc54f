// A unary answer of the lean gRPC transport built while its execution still runs (decision 0023):
// at the execution's end the session writes these frames as they are (h2-grpc-lean-sender.ts), if
// the peer's windows and frame size still allow.
import {
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FRAME_DATA,
  FRAME_HEADERS,
  frame,
} from '@infergate/core/internal/grpc-frames';
import { frameHead, OK_TRAILERS_BLOCK, RESPONSE_BLOCK } from './h2-grpc-lean-frames.js';

/** A unary answer's frames, built before its execution ended (`prepareReply`). */
export interface PreparedReply {
  readonly frames: readonly Buffer[];
  /** Its DATA frames' payload, what the send windows must hold. */
  readonly bytes: number;
  /** The peer's frame size it was split at. */
  readonly maxFrame: number;
}

/**
 * A unary answer's frames, built ahead of its write: HEADERS, the message as DATA frames at the
 * peer's frame size `maxFrame`, trailers. Undefined if its header blocks need CONTINUATION.
 */
export function prepareReply(
  id: number,
  chunks: readonly Buffer[],
  maxFrame: number,
): PreparedReply | undefined {
  const max = maxFrame;
  if (RESPONSE_BLOCK.byteLength > max || OK_TRAILERS_BLOCK.byteLength > max) return undefined;
  const frames: Buffer[] = [frame(FRAME_HEADERS, FLAG_END_HEADERS, id, RESPONSE_BLOCK)];
  let bytes = 0;
  for (const chunk of chunks) {
    for (let at = 0; at < chunk.byteLength; at += max) {
      const piece = at === 0 && chunk.byteLength <= max ? chunk : chunk.subarray(at, at + max);
      frames.push(frameHead(piece.byteLength, FRAME_DATA, 0, id), piece);
      bytes += piece.byteLength;
    }
  }
  frames.push(frame(FRAME_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, id, OK_TRAILERS_BLOCK));
  return { frames, bytes, maxFrame: max };
}
