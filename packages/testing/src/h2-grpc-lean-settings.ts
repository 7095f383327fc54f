// SETTINGS on a lean gRPC connection (h2-grpc-lean-session.ts), both ways: the limits we announce,
// and what a client's SETTINGS frame changes here (RFC 9113, 6.5.2), checked as the RFC requires.
import {
  FLAG_ACK,
  FLOW_CONTROL_ERROR,
  FRAME_SETTINGS,
  FRAME_SIZE_ERROR,
  frame,
  MAX_MAX_FRAME_SIZE,
  MAX_WINDOW,
  MIN_MAX_FRAME_SIZE,
  PROTOCOL_ERROR,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
} from '@infergate/core/internal/grpc-frames';

/** The transport's limits (the same as the node:http2 transport's). */
export interface LeanLimits {
  maxConcurrentStreams: number;
  streamWindow: number;
  sessionWindow: number;
  /** Our SETTINGS_MAX_FRAME_SIZE: core's frame reader refuses frames over it. */
  maxFrameSize: number;
}

/** Our SETTINGS: the cap on open streams, each stream's receive window, the largest frame we read. */
export function settingsFrame(limits: LeanLimits): Buffer {
  const settings = Buffer.allocUnsafe(18);
  settings.writeUInt16BE(SETTINGS_MAX_CONCURRENT_STREAMS, 0);
  settings.writeUInt32BE(limits.maxConcurrentStreams, 2);
  settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 6);
  settings.writeUInt32BE(limits.streamWindow, 8);
  settings.writeUInt16BE(SETTINGS_MAX_FRAME_SIZE, 12);
  settings.writeUInt32BE(limits.maxFrameSize, 14);
  return frame(FRAME_SETTINGS, 0, 0, settings);
}

/** The settings of a client's SETTINGS frame that matter here (the last of each wins). */
export interface PeerSettings {
  /** SETTINGS_INITIAL_WINDOW_SIZE: every stream's send window moves by its change. */
  initialWindow: number | undefined;
  /** SETTINGS_MAX_FRAME_SIZE: the largest frame we may send. */
  maxFrame: number | undefined;
}

/** A SETTINGS frame that breaks the protocol: the connection error it calls for. */
export interface SettingsError {
  code: number;
  text: string;
}

/** A client's SETTINGS frame read: its settings, an error, or undefined for an acknowledgement. */
export function readPeerSettings(
  flags: number,
  id: number,
  payload: Buffer,
): PeerSettings | SettingsError | undefined {
  if (id !== 0) return { code: PROTOCOL_ERROR, text: 'SETTINGS on a stream' };
  if ((flags & FLAG_ACK) !== 0) return undefined;
  if (payload.byteLength % 6 !== 0) return { code: FRAME_SIZE_ERROR, text: 'SETTINGS of a wrong size' };
  const settings: PeerSettings = { initialWindow: undefined, maxFrame: undefined };
  for (let at = 0; at < payload.byteLength; at += 6) {
    const key = payload.readUInt16BE(at);
    const value = payload.readUInt32BE(at + 2);
    if (key === SETTINGS_INITIAL_WINDOW_SIZE) {
      if (value > MAX_WINDOW) return { code: FLOW_CONTROL_ERROR, text: 'initial window over 2^31-1' };
      settings.initialWindow = value;
    } else if (key === SETTINGS_MAX_FRAME_SIZE) {
      if (value < MIN_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE) {
        return { code: PROTOCOL_ERROR, text: 'SETTINGS_MAX_FRAME_SIZE out of range' };
      }
      settings.maxFrame = value;
    } else if (key === SETTINGS_ENABLE_PUSH && value > 1) {
      return { code: PROTOCOL_ERROR, text: 'SETTINGS_ENABLE_PUSH not 0 or 1' };
    }
  }
  return settings;
}
