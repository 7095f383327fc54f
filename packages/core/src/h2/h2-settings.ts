// SETTINGS both ways (RFC 9113, 6.5): what we announce in the connection preface, and the server's
// settings as they arrive, applied in order to the streams' send windows and the header encoder.
import {
  DEFAULT_HEADER_TABLE_SIZE,
  DEFAULT_WINDOW,
  FLOW_CONTROL_ERROR,
  FRAME_SETTINGS,
  FRAME_SIZE_ERROR,
  FRAME_WINDOW_UPDATE,
  frame,
  frame32,
  MAX_MAX_FRAME_SIZE,
  MAX_WINDOW,
  MIN_MAX_FRAME_SIZE,
  PREFACE,
  PROTOCOL_ERROR,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_HEADER_TABLE_SIZE,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  SETTINGS_MAX_HEADER_LIST_SIZE,
} from './h2-frame-types.js';
import type { SessionStream } from './h2-stream.js';

/**
 * Our receive windows. HTTP/2's default (64 KiB per stream and per connection) makes a 1 MiB answer
 * wait for 16 WINDOW_UPDATE round trips; gRPC's C core grows its windows by bandwidth probing to the
 * same end. 16 MiB per stream and 64 MiB for the connection keep large tensors flowing.
 */
export const STREAM_WINDOW = 16 * 1024 * 1024;
export const CONNECTION_WINDOW = 64 * 1024 * 1024;
/** The largest frame we accept. DATA is read in pieces as it arrives; other frames are gathered whole. */
export const OUR_MAX_FRAME_SIZE = 1024 * 1024;
/**
 * The largest header list we take from the server (response headers or trailers), counted as HTTP/2
 * counts it: name + value octets + 32 per field, decoded. A header block (HEADERS + CONTINUATION,
 * compressed) is held to the same bound: no field encodes to more octets than it counts for.
 */
export const OUR_MAX_HEADER_LIST_SIZE = 64 * 1024;

/** The bytes a client sends first: the preface, our SETTINGS, and the connection window's growth. */
export function clientPreface(): Buffer {
  const pairs = [
    [SETTINGS_ENABLE_PUSH, 0],
    [SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW],
    [SETTINGS_MAX_FRAME_SIZE, OUR_MAX_FRAME_SIZE],
    [SETTINGS_HEADER_TABLE_SIZE, DEFAULT_HEADER_TABLE_SIZE],
    [SETTINGS_MAX_HEADER_LIST_SIZE, OUR_MAX_HEADER_LIST_SIZE],
  ] as const;
  const settings = Buffer.allocUnsafe(pairs.length * 6);
  pairs.forEach(([id, value], index) => {
    settings.writeUInt16BE(id, index * 6);
    settings.writeUInt32BE(value, index * 6 + 2);
  });
  return Buffer.concat([
    PREFACE,
    frame(FRAME_SETTINGS, 0, 0, settings),
    frame32(FRAME_WINDOW_UPDATE, 0, CONNECTION_WINDOW - DEFAULT_WINDOW),
  ]);
}

/** Told of each HEADER_TABLE_SIZE the server sets, in order (the encoder must see every one). */
export interface HeaderTableSizeListener {
  setTableSize(size: number): void;
}

/** The server's settings: HTTP/2's defaults until its SETTINGS say otherwise. */
export class PeerSettings {
  initialWindow = DEFAULT_WINDOW;
  maxFrame = MIN_MAX_FRAME_SIZE;
  maxStreams = Number.POSITIVE_INFINITY;
  /** The largest request header list the server takes (unlimited until it says). */
  maxHeaderList = Number.POSITIVE_INFINITY;
  /** After `apply`: whether INITIAL_WINDOW_SIZE grew (streams may send more). */
  windowGrew = false;
  /** After `apply` returned an error code: what was wrong. */
  errorText = '';

  /**
   * Applies one SETTINGS frame's payload (not an ACK) in order: stream send windows follow a changed
   * INITIAL_WINDOW_SIZE, `table` hears each HEADER_TABLE_SIZE. Returns 0, or the HTTP/2 error code
   * of the connection error the frame calls for (`errorText` says why).
   */
  apply(payload: Buffer, streams: Map<number, SessionStream>, table: HeaderTableSizeListener): number {
    this.windowGrew = false;
    if (payload.byteLength % 6 !== 0)
      return this.#fail(FRAME_SIZE_ERROR, `SETTINGS of ${payload.byteLength} bytes`);
    for (let at = 0; at < payload.byteLength; at += 6) {
      const setting = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      switch (setting) {
        case SETTINGS_HEADER_TABLE_SIZE:
          table.setTableSize(Math.min(value, DEFAULT_HEADER_TABLE_SIZE));
          break;
        case SETTINGS_ENABLE_PUSH:
          if (value > 1) return this.#fail(PROTOCOL_ERROR, `ENABLE_PUSH ${value}`);
          break;
        case SETTINGS_MAX_CONCURRENT_STREAMS:
          this.maxStreams = value;
          break;
        case SETTINGS_INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW) return this.#fail(FLOW_CONTROL_ERROR, `INITIAL_WINDOW_SIZE ${value}`);
          const delta = value - this.initialWindow;
          this.initialWindow = value;
          for (const stream of streams.values()) {
            stream.sendWindow += delta;
            if (stream.sendWindow > MAX_WINDOW) {
              return this.#fail(FLOW_CONTROL_ERROR, 'INITIAL_WINDOW_SIZE overflows a stream window');
            }
          }
          if (delta > 0) this.windowGrew = true;
          break;
        }
        case SETTINGS_MAX_FRAME_SIZE:
          if (value < MIN_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE) {
            return this.#fail(PROTOCOL_ERROR, `MAX_FRAME_SIZE ${value}`);
          }
          this.maxFrame = value;
          break;
        case SETTINGS_MAX_HEADER_LIST_SIZE:
          this.maxHeaderList = value;
          break;
        default:
          break;
      }
    }
    return 0;
  }

  #fail(code: number, text: string): number {
    this.errorText = text;
    return code;
  }
}
