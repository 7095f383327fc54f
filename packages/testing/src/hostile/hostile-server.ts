import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema } from '../internal/proto.js';
import { type HostileBehavior, isHostileBehavior, streamMessage, unaryMessage } from './hostile-responses.js';

const SERVICE = '/inference.GRPCInferenceService/';
/** Requests are small here; a bigger one is refused rather than buffered. */
const MAX_REQUEST_BYTES = 1024 * 1024;

export interface HostileServerOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
}

/** A running hostile server: `url` for `createTritonClient`, `stop()` ends it and every stream. */
export interface HostileServer {
  readonly url: string;
  readonly port: number;
  /** Requests answered so far, by behavior. */
  readonly answered: Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

function frame(bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + bytes.byteLength);
  out.writeUInt32BE(bytes.byteLength, 1);
  out.set(bytes, 5);
  return out;
}

function status(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-status': String(code),
      'grpc-message': message,
    },
    { endStream: true },
  );
}

/** Sends `message` as one gRPC message, then OK trailers (unless `keepOpen`). */
function answer(stream: ServerHttp2Stream, body: Buffer, keepOpen = false): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  if (keepOpen) stream.write(body);
  else stream.end(body);
}

/** Reads the first gRPC message of a request, bounded; undefined if it is malformed or too large. */
function firstMessage(stream: ServerHttp2Stream, onMessage: (bytes: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = (bytes: Buffer | undefined) => {
    if (done) return;
    done = true;
    onMessage(bytes);
  };
  stream.on('data', (chunk: Buffer) => {
    if (done) return;
    chunks.push(chunk);
    size += chunk.byteLength;
    const buffer = Buffer.concat(chunks);
    if (buffer.byteLength < 5) return;
    const length = buffer.readUInt32BE(1);
    if (length > MAX_REQUEST_BYTES || size > MAX_REQUEST_BYTES + 5) finish(undefined);
    else if (buffer.byteLength >= 5 + length) finish(buffer.subarray(5, 5 + length));
  });
  stream.on('end', () => finish(undefined));
  stream.on('error', () => finish(undefined));
}

function modelOf(bytes: Buffer | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  try {
    return fromBinary(ModelInferRequestSchema, bytes).modelName;
  } catch {
    return undefined;
  }
}

/**
 * A KServe v2 / Triton gRPC endpoint that answers ModelInfer and ModelStreamInfer wrongly, on
 * purpose: the model a request names picks the fault (`HOSTILE_BEHAVIORS`). It speaks raw HTTP/2,
 * not grpc-js, so it can send what no well-behaved server library would. Every other RPC, and an
 * unknown model, answers UNIMPLEMENTED / NOT_FOUND. Listens on 127.0.0.1 by default.
 */
export async function startHostileServer(options: HostileServerOptions = {}): Promise<HostileServer> {
  const sessions = new Set<Http2Session>();
  const answered: Record<string, number> = {};
  const server: Http2Server = createServer();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => {});
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const path = String(headers[':path'] ?? '');
    const method = path.startsWith(SERVICE) ? path.slice(SERVICE.length) : '';
    if (method !== 'ModelInfer' && method !== 'ModelStreamInfer') {
      stream.on('data', () => {});
      status(stream, 12, `the hostile server does not implement ${path}`);
      return;
    }
    firstMessage(stream, (bytes) => {
      const model = modelOf(bytes);
      if (model === undefined || !isHostileBehavior(model)) {
        status(stream, 5, `unknown model '${model ?? ''}'`);
        return;
      }
      answered[model] = (answered[model] ?? 0) + 1;
      respond(stream, method === 'ModelStreamInfer', model);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${host}:${address.port}`,
    port: address.port,
    answered,
    stop: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function respond(stream: ServerHttp2Stream, streaming: boolean, behavior: HostileBehavior): void {
  if (behavior === 'truncated-frame') {
    // Declares a 1 GiB message, sends 16 bytes of it and ends the stream.
    const header = Buffer.alloc(5);
    header.writeUInt32BE(1024 ** 3, 1);
    answer(stream, Buffer.concat([header, Buffer.alloc(16)]));
    return;
  }
  const body = frame(streaming ? streamMessage(behavior, behavior) : unaryMessage(behavior, behavior));
  answer(stream, body, streaming && behavior === 'stall');
}
