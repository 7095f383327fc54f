import type * as grpc from '@grpc/grpc-js';
import { MAX_TIMER_MS } from '@infergate/core/internal/long-timer';
import { parseTimeout } from './grpc-wire.js';

interface StreamSource {
  prependListener(
    event: 'stream',
    listener: (stream: unknown, headers: Record<string, unknown>) => void,
  ): unknown;
}

/**
 * grpc-js's server reads a grpc-timeout as a 32-bit integer of ms: one over 2^31 − 1 ms wraps below
 * zero and ends the call at once with DEADLINE_EXCEEDED (and its timer could not hold it anyway).
 * Such a header is dropped before grpc-js reads it, so the call has no server-side deadline; the
 * client's own ends it. Through grpc-js's private `http2Servers` map, as request-encoding.ts.
 */
export function dropLongGrpcTimeouts(server: grpc.Server): void {
  const http2Servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(http2Servers instanceof Map)) return;
  for (const source of http2Servers.keys() as IterableIterator<StreamSource>) {
    source.prependListener('stream', (_stream, headers) => {
      const timeout = headers['grpc-timeout'];
      if (typeof timeout !== 'string') return;
      let ms: number;
      try {
        ms = parseTimeout(timeout);
      } catch {
        return; // grpc-js refuses it itself.
      }
      if (ms > MAX_TIMER_MS) delete headers['grpc-timeout'];
    });
  }
}
