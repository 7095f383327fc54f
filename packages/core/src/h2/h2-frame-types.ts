// HTTP/2 frame types, flags, settings and error codes (RFC 9113, sections 6, 6.5.2 and 7), as far as
// the http2 engine's client uses them.

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
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

export const SETTINGS_HEADER_TABLE_SIZE = 0x1;
export const SETTINGS_ENABLE_PUSH = 0x2;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

export const NO_ERROR = 0x0;
export const PROTOCOL_ERROR = 0x1;
export const INTERNAL_ERROR = 0x2;
export const FLOW_CONTROL_ERROR = 0x3;
export const STREAM_CLOSED = 0x5;
export const FRAME_SIZE_ERROR = 0x6;
export const REFUSED_STREAM = 0x7;
export const CANCEL = 0x8;
export const COMPRESSION_ERROR = 0x9;
export const ENHANCE_YOUR_CALM = 0xb;

const ERROR_NAMES = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
];

/** An error code's name (`PROTOCOL_ERROR`), or its number for codes RFC 9113 does not name. */
export function errorName(code: number): string {
  return ERROR_NAMES[code] ?? `0x${code.toString(16)}`;
}

/** The client connection preface (RFC 9113, 3.4). */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** The largest window and stream id HTTP/2 allows (2^31 - 1). */
export const MAX_WINDOW = 0x7fffffff;
export const MAX_STREAM_ID = 0x7fffffff;
/** The smallest and largest SETTINGS_MAX_FRAME_SIZE a peer may announce. */
export const MIN_MAX_FRAME_SIZE = 16_384;
export const MAX_MAX_FRAME_SIZE = 16_777_215;
/** HTTP/2's defaults before a peer's SETTINGS say otherwise. */
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_HEADER_TABLE_SIZE = 4096;

/** Writes a 9-byte frame header at `target[offset]`. */
export function writeFrameHead(
  target: Uint8Array,
  offset: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): void {
  target[offset] = (length >>> 16) & 0xff;
  target[offset + 1] = (length >>> 8) & 0xff;
  target[offset + 2] = length & 0xff;
  target[offset + 3] = type;
  target[offset + 4] = flags;
  target[offset + 5] = (streamId >>> 24) & 0x7f;
  target[offset + 6] = (streamId >>> 16) & 0xff;
  target[offset + 7] = (streamId >>> 8) & 0xff;
  target[offset + 8] = streamId & 0xff;
}

/** A whole frame with `payload` (copied). */
export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.byteLength ?? 0;
  const out = Buffer.allocUnsafe(9 + length);
  writeFrameHead(out, 0, length, type, flags, streamId);
  if (payload !== undefined) out.set(payload, 9);
  return out;
}

/** A frame whose payload is one 32-bit number (WINDOW_UPDATE, RST_STREAM). */
export function frame32(type: number, streamId: number, value: number): Buffer {
  const out = Buffer.allocUnsafe(13);
  writeFrameHead(out, 0, 4, type, 0, streamId);
  out.writeUInt32BE(value >>> 0, 9);
  return out;
}

/** A GOAWAY frame: the last stream id processed, the error code and a debug text. */
export function goawayFrame(lastStreamId: number, code: number, debug: string): Buffer {
  const text = Buffer.from(debug, 'utf8');
  const payload = Buffer.allocUnsafe(8 + text.byteLength);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  text.copy(payload, 8);
  return frame(FRAME_GOAWAY, 0, 0, payload);
}
