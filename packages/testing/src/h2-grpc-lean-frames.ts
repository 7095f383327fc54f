// The lean gRPC transport's own HTTP/2 wire pieces (h2-grpc-lean-session.ts; frame types, codes and
// whole frames are core's): a DATA frame's head written apart from its payload, and the header
// blocks of an answer, written as HPACK literals without indexing so no dynamic table is kept.
import { MIN_MAX_FRAME_SIZE, writeFrameHead } from '@infergate/core/internal/grpc-frames';
import { encodeGrpcMessage } from './internal/grpc-wire.js';

/** A peer's SETTINGS_MAX_FRAME_SIZE until it says otherwise (RFC 9113, 6.5.2: the smallest allowed). */
export const DEFAULT_MAX_FRAME = MIN_MAX_FRAME_SIZE;

/** A frame's 9-byte head alone (its payload written after it, uncopied). */
export function frameHead(length: number, type: number, flags: number, id: number): Buffer {
  const head = Buffer.allocUnsafe(9);
  writeFrameHead(head, 0, length, type, flags, id);
  return head;
}

/** An HPACK integer with an `prefix`-bit prefix, its first byte ORed with `high`. */
function hpackInteger(out: number[], value: number, prefix: number, high: number): void {
  const max = (1 << prefix) - 1;
  if (value < max) {
    out.push(high | value);
    return;
  }
  out.push(high | max);
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/**
 * A header block of literal fields without indexing (RFC 7541, 6.2.2), no Huffman: the connection's
 * dynamic table is never used, so the peer's table size does not matter. `:status` 200 is the
 * static table's entry 8.
 */
export function encodeHeaderBlock(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  const out: number[] = [];
  for (const [name, value] of fields) {
    if (name === ':status' && value === '200') {
      out.push(0x88);
      continue;
    }
    if (name === ':status') out.push(0x08);
    else {
      out.push(0x00);
      hpackInteger(out, Buffer.byteLength(name, 'latin1'), 7, 0);
      for (let i = 0; i < name.length; i++) out.push(name.charCodeAt(i) & 0xff);
    }
    const bytes = Buffer.from(value, 'latin1');
    hpackInteger(out, bytes.byteLength, 7, 0);
    for (const byte of bytes) out.push(byte);
  }
  return Buffer.from(out);
}

export const RESPONSE_BLOCK = encodeHeaderBlock([
  [':status', '200'],
  ['content-type', 'application/grpc+proto'],
  ['grpc-accept-encoding', 'identity,deflate,gzip'],
]);
export const OK_TRAILERS_BLOCK = encodeHeaderBlock([['grpc-status', '0']]);
export const UNSUPPORTED_MEDIA_BLOCK = encodeHeaderBlock([[':status', '415']]);

export function statusBlock(code: number, message: string, trailersOnly: boolean): Buffer {
  const fields: [string, string][] = trailersOnly
    ? [
        [':status', '200'],
        ['content-type', 'application/grpc+proto'],
      ]
    : [];
  fields.push(['grpc-status', String(code)]);
  if (message !== '') fields.push(['grpc-message', encodeGrpcMessage(message)]);
  return encodeHeaderBlock(fields);
}
