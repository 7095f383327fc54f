// A connection's socket (plaintext or TLS), read into one buffer of its own that every read reuses
// (Node's `onread`) instead of a fresh allocation per read. At 1 MiB per answer those allocations were
// a megabyte of short-lived memory per call, and the garbage collections they set off; over TLS they
// would undo what `RequestedOutput.into` saves. Whatever the session keeps of a read it copies (the
// frame reader's contract: a chunk is valid during the call). Bun and Deno honour `onread` too.
import { connect, type Socket } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';

/** The read buffer's size (libuv's usual read size). */
export const READ_BUFFER_BYTES = 64 * 1024;

/** Node's `onread` option: each read lands in one buffer and is emitted on `socket()` as 'data'. */
function reusedReadBuffer(socket: () => Socket): { buffer: Buffer; callback: (bytes: number) => boolean } {
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  return {
    buffer,
    callback: (bytes) => {
      socket().emit('data', buffer.subarray(0, bytes));
      return true;
    },
  };
}

/** Dials `host:port` with TCP_NODELAY; each read is emitted as a 'data' event, a view of the buffer. */
export function connectPlain(host: string, port: number): Socket {
  const socket: Socket = connect({
    host,
    port,
    noDelay: true,
    // The session closes the socket itself at the server's end of stream (h2-session.ts), once the
    // turn that reported the loss is over. Without this Node would half-close it first, on its own,
    // in a process.nextTick that runs ahead of the calls moving to another endpoint.
    allowHalfOpen: true,
    onread: reusedReadBuffer(() => socket),
  });
  return socket;
}

/** `tls.connect(options)` with the decrypted bytes read the same way (a view of one reused buffer). */
export function connectTls(options: ConnectionOptions): TLSSocket {
  const socket: TLSSocket = tlsConnect({
    ...options,
    // Passed through to net.Socket by tls.connect (absent from its option type).
    onread: reusedReadBuffer(() => socket),
  } as ConnectionOptions);
  return socket;
}
