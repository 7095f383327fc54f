// The lean listener's plain connections, each read into one buffer of its own that every read reuses
// (Node's `onread`), as core's client reads its socket (h2-socket.ts). Node gives each read of
// an accepted socket fresh memory: at 1 MiB per request that was a megabyte of short-lived buffers per
// call, which V8 counts against its heap's limits, so the server ran a mark-compact every 20 to 40
// calls in phases, and its CPU per call swung from 0.57 to 2.53 ms from one benchmark window to the next
// (bench/gc-server-probe.ts). `net.Server` takes no `onread` option; a `net.Socket` does, so each
// connection, accepted paused, moves into a socket made with one. Everything the lean session keeps of
// a read it copies (core's frame, header-block and message readers).
import { type Server, Socket } from 'node:net';

/** The read buffer's size (libuv's usual read size). */
export const SERVER_READ_BUFFER_BYTES = 64 * 1024;

/** What Node's `net` keeps on an accepted socket that the move below needs (not public API). */
interface AcceptedInternals {
  _handle?: { useUserBuffer?: unknown } | null;
  _server?: Server | null;
  server?: Server | null;
}

/**
 * The connection `accepted` (from a server made with `pauseOnConnect: true`) as a socket that reads
 * into one reused buffer and emits each read as a 'data' event, a view of that buffer valid only
 * during the event. The new socket takes over the server's count of open connections, so
 * `server.close()` still waits for it. Where the runtime's sockets lack what the move needs, `accepted`
 * itself is resumed and returned (fresh memory per read, as before).
 */
export function withReusedReadBuffer(accepted: Socket, server: Server): Socket {
  const internals = accepted as unknown as AcceptedInternals;
  const handle = internals._handle;
  if (handle === null || handle === undefined || typeof handle.useUserBuffer !== 'function') {
    accepted.resume();
    return accepted;
  }
  const buffer = Buffer.allocUnsafe(SERVER_READ_BUFFER_BYTES);
  internals._handle = null;
  internals._server = null;
  internals.server = null;
  const socket: Socket = new Socket({
    handle,
    allowHalfOpen: (server as unknown as { allowHalfOpen?: boolean }).allowHalfOpen === true,
    readable: true,
    writable: true,
    onread: {
      buffer,
      callback: (bytes: number) => {
        socket.emit('data', buffer.subarray(0, bytes));
        return true;
      },
    },
  } as ConstructorParameters<typeof Socket>[0]);
  const adopted = socket as unknown as AcceptedInternals;
  adopted._server = server;
  adopted.server = server;
  return socket;
}
