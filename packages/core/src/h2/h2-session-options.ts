// What an H2Session is told when it is made, and what it tells its owner (h2-connection.ts).
import type { WritePolicy } from './h2-frame-writer.js';

export interface H2SessionEvents {
  /** The server's first SETTINGS arrived. */
  onReady(): void;
  /** The session takes no new streams (GOAWAY, or its stream ids ran out); running ones go on. */
  onDraining(): void;
  /** The socket closed; `error` if it failed; `streams`: how many streams (open or waiting) it failed. */
  onClose(error: Error | undefined, streams: number): void;
}

export interface H2SessionOptions {
  authority: string;
  scheme: 'http' | 'https';
  events: H2SessionEvents;
  /** Calls beyond the server's MAX_CONCURRENT_STREAMS wait in a FIFO of at most this many. */
  maxWaiting?: number | undefined;
  /** The first stream id (odd); only tests start elsewhere than 1. */
  firstStreamId?: number | undefined;
  writePolicy?: WritePolicy | undefined;
  /**
   * How long the socket may take to connect and the server to send its first SETTINGS; then the
   * session fails as a dial that did not connect. @default 20000 (gRPC's minimum connect timeout)
   */
  settingsTimeoutMs?: number | undefined;
}

/** The wait queue's default bound. */
export const DEFAULT_MAX_WAITING = 4096;
export const DEFAULT_SETTINGS_TIMEOUT_MS = 20_000;
