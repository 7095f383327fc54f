// A client's SETTINGS as the lean session reads them (RFC 9113, 6.5.2): the values that matter
// here, the last of each winning, and the connection error each broken frame calls for.
import {
  FLAG_ACK,
  FLOW_CONTROL_ERROR,
  FRAME_SETTINGS,
  FRAME_SIZE_ERROR,
  PROTOCOL_ERROR,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_HEADER_TABLE_SIZE,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
} from '@infergate/core/internal/grpc-frames';
import { describe, expect, it } from 'vitest';
import { readPeerSettings, settingsFrame } from './h2-grpc-lean-settings.js';

function payload(...pairs: [number, number][]): Buffer {
  const out = Buffer.alloc(pairs.length * 6);
  pairs.forEach(([key, value], index) => {
    out.writeUInt16BE(key, index * 6);
    out.writeUInt32BE(value, index * 6 + 2);
  });
  return out;
}

describe('readPeerSettings', () => {
  it('takes the initial window and frame size, the last of each winning, and ignores the rest', () => {
    const read = readPeerSettings(
      0,
      0,
      payload(
        [SETTINGS_INITIAL_WINDOW_SIZE, 1000],
        [SETTINGS_HEADER_TABLE_SIZE, 0],
        [SETTINGS_MAX_FRAME_SIZE, 32_768],
        [SETTINGS_INITIAL_WINDOW_SIZE, 2000],
        [SETTINGS_ENABLE_PUSH, 0],
      ),
    );
    expect(read).toEqual({ initialWindow: 2000, maxFrame: 32_768 });
  });

  it('leaves out what the frame does not set', () => {
    expect(readPeerSettings(0, 0, Buffer.alloc(0))).toEqual({
      initialWindow: undefined,
      maxFrame: undefined,
    });
  });

  it('reads nothing from an acknowledgement', () => {
    expect(readPeerSettings(FLAG_ACK, 0, Buffer.alloc(0))).toBeUndefined();
  });

  it('names the connection error of each broken frame', () => {
    const code = (flags: number, id: number, body: Buffer) => {
      const read = readPeerSettings(flags, id, body);
      return read !== undefined && 'code' in read ? read.code : undefined;
    };
    expect(code(0, 1, Buffer.alloc(0))).toBe(PROTOCOL_ERROR);
    expect(code(0, 0, Buffer.alloc(5))).toBe(FRAME_SIZE_ERROR);
    expect(code(0, 0, payload([SETTINGS_INITIAL_WINDOW_SIZE, 2 ** 31]))).toBe(FLOW_CONTROL_ERROR);
    expect(code(0, 0, payload([SETTINGS_MAX_FRAME_SIZE, 16_383]))).toBe(PROTOCOL_ERROR);
    expect(code(0, 0, payload([SETTINGS_MAX_FRAME_SIZE, 2 ** 24]))).toBe(PROTOCOL_ERROR);
    expect(code(0, 0, payload([SETTINGS_ENABLE_PUSH, 2]))).toBe(PROTOCOL_ERROR);
    expect(code(0, 0, payload([SETTINGS_INITIAL_WINDOW_SIZE, 2 ** 31 - 1]))).toBeUndefined();
    expect(code(0, 0, payload([SETTINGS_MAX_FRAME_SIZE, 2 ** 24 - 1]))).toBeUndefined();
  });
});

describe('settingsFrame', () => {
  it('announces the cap on open streams, the stream window and the largest frame we read', () => {
    const frame = settingsFrame({
      maxConcurrentStreams: 7,
      streamWindow: 1 << 20,
      sessionWindow: 1 << 22,
      maxFrameSize: 1 << 16,
    });
    expect(frame.readUIntBE(0, 3)).toBe(18);
    expect(frame[3]).toBe(FRAME_SETTINGS);
    expect(readPeerSettings(0, 0, frame.subarray(9))).toEqual({ initialWindow: 1 << 20, maxFrame: 1 << 16 });
    expect(frame.readUInt16BE(9)).toBe(SETTINGS_MAX_CONCURRENT_STREAMS);
    expect(frame.readUInt32BE(11)).toBe(7);
  });
});
