// A raw HTTP/2 peer for the http2 engine's tests: a TCP server whose connections are `RawPeer`s that
// read the client's frames (HPACK-decoding its header blocks, counting flow-control credit) and
// write frames by hand, so a test can send what node:http2 never would.
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { createGrpcTransport, type GrpcTransport, InfergateError } from '@infergate/core';
import { ModelInferResponseSchema } from '@infergate/core/proto';
import { expect } from 'vitest';
import { H2Session } from '../../packages/core/src/h2/h2-session.js';
import type { H2SessionEvents } from '../../packages/core/src/h2/h2-session-options.js';
import { HpackDecoder, HpackEncoder } from '../../packages/core/src/h2/hpack.js';

export const DATA = 0x0;
export const HEADERS = 0x1;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;
export const END_STREAM = 0x1;
export const ACK = 0x1;
export const END_HEADERS = 0x4;
export const PADDED = 0x8;
export const PRIORITY = 0x20;
export const SETTINGS_HEADER_TABLE_SIZE = 0x1;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

export interface Frame {
  type: number;
  flags: number;
  id: number;
  payload: Buffer;
}

export interface Request {
  id: number;
  headers: Record<string, string>;
  body: Buffer[];
  bytes: number;
}

export function encodeFrame(
  type: number,
  flags: number,
  id: number,
  payload: Uint8Array = Buffer.alloc(0),
): Buffer {
  const out = Buffer.alloc(9 + payload.byteLength);
  out.writeUIntBE(payload.byteLength, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(id, 5);
  out.set(payload, 9);
  return out;
}

export function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

/** One client connection as the raw server sees it. */
export class RawPeer {
  readonly frames: Frame[] = [];
  readonly requests: Request[] = [];
  readonly decoder: HpackDecoder;
  readonly encoder = new HpackEncoder();
  /** DATA beyond the credit this peer gave (must stay 0). */
  overruns = 0;
  maxDataFrame = 0;
  decodeErrors = 0;
  connectionCredit = 65_535;
  readonly streamCredit = new Map<number, number>();
  initialWindow = 65_535;
  /** Called once a request's END_STREAM arrives. */
  onRequest: (request: Request) => void = () => {};
  onData: (frame: Frame) => void = () => {};
  onHeaders: (frame: Frame) => void = () => {};
  #pending = Buffer.alloc(0);
  #prefaceLeft = 24;
  #open = new Map<number, Request>();

  constructor(
    readonly socket: Socket,
    tableSize: number,
  ) {
    this.decoder = new HpackDecoder(tableSize);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => {});
  }

  send(type: number, flags: number, id: number, payload?: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(encodeFrame(type, flags, id, payload));
  }

  settings(pairs: readonly (readonly [number, number])[]): void {
    const payload = Buffer.alloc(6 * pairs.length);
    pairs.forEach(([id, value], index) => {
      payload.writeUInt16BE(id, 6 * index);
      payload.writeUInt32BE(value, 6 * index + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        for (const [stream, credit] of this.streamCredit) {
          this.streamCredit.set(stream, credit + value - this.initialWindow);
        }
        this.initialWindow = value;
      }
    });
    this.send(SETTINGS, 0, 0, payload);
  }

  credit(id: number, bytes: number): void {
    if (id === 0) this.connectionCredit += bytes;
    else this.streamCredit.set(id, (this.streamCredit.get(id) ?? 0) + bytes);
    this.send(WINDOW_UPDATE, 0, id, u32(bytes));
  }

  /** A gRPC answer: response headers, one message in two DATA frames, trailers. */
  answer(id: number, message: Uint8Array, status = '0'): void {
    this.send(
      HEADERS,
      END_HEADERS,
      id,
      this.encoder.encode([
        [':status', '200'],
        ['content-type', 'application/grpc'],
      ]),
    );
    const framed = grpcFrame(message);
    this.send(DATA, 0, id, framed.subarray(0, 3));
    this.send(DATA, 0, id, framed.subarray(3));
    this.send(HEADERS, END_HEADERS | END_STREAM, id, this.encoder.encode([['grpc-status', status]]));
  }

  #read(chunk: Buffer): void {
    let buffer = Buffer.concat([this.#pending, chunk]);
    if (this.#prefaceLeft > 0) {
      const take = Math.min(this.#prefaceLeft, buffer.byteLength);
      this.#prefaceLeft -= take;
      buffer = buffer.subarray(take);
    }
    while (buffer.byteLength >= 9) {
      const length = buffer.readUIntBE(0, 3);
      if (buffer.byteLength < 9 + length) break;
      const frame = {
        type: buffer[3] as number,
        flags: buffer[4] as number,
        id: buffer.readUInt32BE(5) & 0x7fffffff,
        payload: Buffer.from(buffer.subarray(9, 9 + length)),
      };
      buffer = buffer.subarray(9 + length);
      this.frames.push(frame);
      this.#frame(frame);
    }
    this.#pending = buffer;
  }

  #frame(frame: Frame): void {
    if (frame.type === SETTINGS && (frame.flags & ACK) === 0) this.send(SETTINGS, ACK, 0);
    if (frame.type === HEADERS) {
      const request: Request = { id: frame.id, headers: {}, body: [], bytes: 0 };
      try {
        this.decoder.decode(frame.payload, (name, value) => {
          request.headers[name] = value;
        });
      } catch {
        this.decodeErrors++;
      }
      this.#open.set(frame.id, request);
      this.streamCredit.set(frame.id, this.initialWindow);
      this.onHeaders(frame);
      if ((frame.flags & END_STREAM) !== 0) this.#ended(request);
    }
    if (frame.type === DATA) {
      const length = frame.payload.byteLength;
      this.maxDataFrame = Math.max(this.maxDataFrame, length);
      this.connectionCredit -= length;
      const left = (this.streamCredit.get(frame.id) ?? 0) - length;
      this.streamCredit.set(frame.id, left);
      if (this.connectionCredit < 0 || left < 0) this.overruns++;
      const request = this.#open.get(frame.id);
      if (request !== undefined) {
        request.body.push(frame.payload);
        request.bytes += length;
        this.onData(frame);
        if ((frame.flags & END_STREAM) !== 0) this.#ended(request);
      }
    }
  }

  #ended(request: Request): void {
    this.#open.delete(request.id);
    this.requests.push(request);
    this.onRequest(request);
  }
}

export function grpcFrame(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

export const answerOf = (raw: Uint8Array) =>
  toBinary(
    ModelInferResponseSchema,
    create(ModelInferResponseSchema, {
      modelName: 'm',
      outputs: [{ name: 'OUT', datatype: 'UINT8', shape: [BigInt(raw.byteLength)] }],
      rawOutputContents: [raw],
    }),
  );

/** What each test leaves open (servers, transports, sessions), closed by `closeAll` after it. */
export const cleanups: (() => Promise<void> | void)[] = [];

export async function closeAll(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/**
 * An H2Session on `port` (or over `socket`), closed after the test, with events that record what
 * happens to it (`seen`).
 */
export function recordingSession(
  port: number,
  settingsTimeoutMs?: number,
  socket?: Socket,
  maxWaiting?: number,
): {
  session: H2Session;
  seen: { ready: boolean; draining: boolean; closed: boolean; error: Error | undefined };
} {
  const seen = { ready: false, draining: false, closed: false, error: undefined as Error | undefined };
  const events: H2SessionEvents = {
    onReady: () => {
      seen.ready = true;
    },
    onDraining: () => {
      seen.draining = true;
    },
    onClose: (error) => {
      seen.closed = true;
      seen.error = error;
    },
  };
  const made = new H2Session(socket ?? connect({ host: '127.0.0.1', port }), {
    authority: `127.0.0.1:${port}`,
    scheme: 'http',
    events,
    settingsTimeoutMs,
    maxWaiting,
  });
  cleanups.push(() => made.destroy());
  return { session: made, seen };
}

export interface RawServer {
  url: string;
  port: number;
  peers: RawPeer[];
}

/** A TCP server whose connections are RawPeers that open with `settings`. */
export async function rawServer(
  setup: (peer: RawPeer) => void,
  settings: readonly (readonly [number, number])[] = [],
  tableSize = 4096,
): Promise<RawServer> {
  const peers: RawPeer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const peer = new RawPeer(socket, tableSize);
    peers.push(peer);
    setup(peer);
    peer.settings(settings);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `127.0.0.1:${port}`, port, peers };
}

export function transport(url: string): GrpcTransport {
  const made = createGrpcTransport({ url, engine: 'http2', enableGpuIpc: false, timeoutMs: 10_000 });
  cleanups.push(() => made.close());
  return made;
}

export const small = {
  model: 'm',
  inputs: [{ name: 'IN', datatype: 'UINT8' as const, shape: [1], raw: new Uint8Array([1]) }],
};

export async function firstByte(made: GrpcTransport, request = small): Promise<number> {
  const response = await made.infer(request);
  return response.outputs[0]?.raw?.[0] ?? -1;
}

export async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InfergateError);
  return error as InfergateError;
}
