import type * as grpc from '@grpc/grpc-js';

/** The metadata key under which the request's `grpc-encoding` header is kept for RecordedCall. */
export const ENCODING_KEY = 'x-infergate-grpc-encoding';

interface StreamSource {
  prependListener(
    event: 'stream',
    listener: (stream: unknown, headers: Record<string, unknown>) => void,
  ): unknown;
}

/**
 * grpc-js strips `grpc-encoding` from the metadata handlers see, so tests could not tell whether a
 * request arrived compressed. This copies it to `x-infergate-grpc-encoding` before grpc-js reads
 * the headers (via grpc-js's private `http2Servers` map, as socket-tracker.ts; a no-op if renamed).
 */
export function exposeRequestEncoding(server: grpc.Server): void {
  const http2Servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(http2Servers instanceof Map)) return;
  for (const source of http2Servers.keys() as IterableIterator<StreamSource>) {
    source.prependListener('stream', (_stream, headers) => {
      const encoding = headers['grpc-encoding'];
      if (typeof encoding === 'string' && encoding !== 'identity') headers[ENCODING_KEY] = encoding;
    });
  }
}
