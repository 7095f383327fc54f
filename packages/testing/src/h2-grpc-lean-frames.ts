// The lean gRPC transport's HTTP/2 wire pieces (h2-grpc-lean-session.ts): frame types, flags and
// error codes (RFC 9113), frames built by hand, and the header blocks of an answer, written as HPACK
// literals without indexing so no dynamic table is kept.
import { encodeGrpcMessage } from './internal/grpc-wire.js';

export const FRAME_DATA = 0x0;
export const FRAME_HEADERS = 0x1;
export const FRAME_PRIORITY = 0x2;
export const FRAME_RST_STREAM = 0x3;
export const FRAME_SETTINGS = 0x4;
export const FRAME_PUSH_PROMISE = 0x5;
export const FRAME_PING = 0x6;
export const FRAME_GOAWAY = 0x7;
export const FRAME_WINDOW_UPDATE = 0x8;
export const FRAME_CONTINUATION = 0x9;
export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const NO_ERROR = 0x0;
export const PROTOCOL_ERROR = 0x1;
export const FLOW_CONTROL_ERROR = 0x3;
export const STREAM_CLOSED = 0x5;
export const FRAME_SIZE_ERROR = 0x6;
export const REFUSED_STREAM = 0x7;
export const MAX_WINDOW = 0x7fffffff;
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME = 16_384;

/** Writes a frame's 9-byte head into `target` at 0. */
export function writeHead(target: Buffer, length: number, type: number, flags: number, id: number): void {
  target[0] = (length >>> 16) & 0xff;
  target[1] = (length >>> 8) & 0xff;
  target[2] = length & 0xff;
  target[3] = type;
  target[4] = flags;
  target.writeUInt32BE(id, 5);
}

export function frameHead(length: number, type: number, flags: number, id: number): Buffer {
  const head = Buffer.allocUnsafe(9);
  writeHead(head, length, type, flags, id);
  return head;
}

/** A whole frame in one buffer (head and payload). */
export function frame(type: number, flags: number, id: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.byteLength);
  writeHead(out, payload.byteLength, type, flags, id);
  payload.copy(out, 9);
  return out;
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
