import type { Socket } from 'node:net';
import type * as grpc from '@grpc/grpc-js';

interface ConnectionSource {
  on(event: 'connection', listener: (socket: Socket) => void): unknown;
}

/**
 * The raw TCP sockets of a grpc-js server, so `kill()` can drop them the way a crash would.
 *
 * grpc-js has no public hook for this: its `forceShutdown()` resets every stream with HTTP/2
 * CANCEL, which clients report as CANCELLED, whereas a crashed Triton makes them report
 * UNAVAILABLE. So this reads grpc-js's private `http2Servers` map (grpc-js 1.14); if a future
 * version renames it, the set stays empty and `kill()` falls back to `forceShutdown()` alone.
 */
export function trackSockets(server: grpc.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  const http2Servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(http2Servers instanceof Map)) return sockets;
  for (const source of http2Servers.keys() as IterableIterator<ConnectionSource>) {
    source.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
  }
  return sockets;
}
