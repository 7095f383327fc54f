// The http2 engine's own HTTP/2 layer (packages/core/src/h2/h2-session.ts) against a raw TCP peer
// that writes frames by hand: CONTINUATION, padding and priority, the smallest MAX_FRAME_SIZE and a
// tiny window, MAX_CONCURRENT_STREAMS 1, GOAWAY mid-call, RST_STREAM, PING, a header table of 0,
// stream ids running out, flow-control credit held back while paused, and frames that break the
// protocol (answered with GOAWAY). Ordinary calls against node:http2 servers are in the other
// http2-engine test files.
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { createGrpcTransport, ErrorCode, type GrpcTransport, InfergateError } from '@infergate/core';
import { ModelInferResponseSchema } from '@infergate/core/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { H2Engine } from '../../packages/core/src/h2/h2-engine.js';
import { H2Session } from '../../packages/core/src/h2/h2-session.js';
import { CLOSE_BUSY, type StreamHandler } from '../../packages/core/src/h2/h2-stream.js';
import { HpackDecoder, HpackEncoder } from '../../packages/core/src/h2/hpack.js';

const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;
const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

interface Frame {
  type: number;
  flags: number;
  id: number;
  payload: Buffer;
}

interface Request {
  id: number;
  headers: Record<string, string>;
  body: Buffer[];
  bytes: number;
}

function encodeFrame(type: number, flags: number, id: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const out = Buffer.alloc(9 + payload.byteLength);
  out.writeUIntBE(payload.byteLength, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(id, 5);
  out.set(payload, 9);
  return out;
}

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

/** One client connection as the raw server sees it. */
class RawPeer {
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

function grpcFrame(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

const answerOf = (raw: Uint8Array) =>
  toBinary(
    ModelInferResponseSchema,
    create(ModelInferResponseSchema, {
      modelName: 'm',
      outputs: [{ name: 'OUT', datatype: 'UINT8', shape: [BigInt(raw.byteLength)] }],
      rawOutputContents: [raw],
    }),
  );

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface RawServer {
  url: string;
  port: number;
  peers: RawPeer[];
}

/** A TCP server whose connections are RawPeers that open with `settings`. */
async function rawServer(
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

function transport(url: string): GrpcTransport {
  const made = createGrpcTransport({ url, engine: 'http2', enableGpuIpc: false, timeoutMs: 10_000 });
  cleanups.push(() => made.close());
  return made;
}

const small = {
  model: 'm',
  inputs: [{ name: 'IN', datatype: 'UINT8' as const, shape: [1], raw: new Uint8Array([1]) }],
};

async function firstByte(made: GrpcTransport, request = small): Promise<number> {
  const response = await made.infer(request);
  return response.outputs[0]?.raw?.[0] ?? -1;
}

async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InfergateError);
  return error as InfergateError;
}

describe('the http2 engine against a raw HTTP/2 peer', () => {
  it('reads headers split over HEADERS (padded, with priority) and CONTINUATION, and padded DATA', async () => {
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        const block = peer.encoder.encode(
          [
            [':status', '200'],
            ['content-type', 'application/grpc'],
            ['x-note', 'n'.repeat(300)],
          ],
          () => true,
        );
        const third = Math.floor(block.byteLength / 3);
        const pad = 4;
        peer.send(
          HEADERS,
          PADDED | PRIORITY,
          id,
          Buffer.concat([Buffer.from([pad]), Buffer.alloc(5), block.subarray(0, third), Buffer.alloc(pad)]),
        );
        peer.send(CONTINUATION, 0, id, block.subarray(third, 2 * third));
        peer.send(CONTINUATION, END_HEADERS, id, block.subarray(2 * third));
        const framed = grpcFrame(answerOf(new Uint8Array([42])));
        peer.send(
          DATA,
          PADDED,
          id,
          Buffer.concat([Buffer.from([7]), framed.subarray(0, 6), Buffer.alloc(7)]),
        );
        peer.send(DATA, PADDED, id, Buffer.concat([Buffer.from([0]), framed.subarray(6)]));
        const trailers = peer.encoder.encode([['grpc-status', '0']]);
        peer.send(
          HEADERS,
          END_HEADERS | END_STREAM | PADDED,
          id,
          Buffer.concat([Buffer.from([3]), trailers, Buffer.alloc(3)]),
        );
      };
    });
    const made = transport(server.url);
    // Twice: the second answer's headers refer to the table entries the first one added.
    expect(await firstByte(made)).toBe(42);
    expect(await firstByte(made)).toBe(42);
    const request = server.peers[0]?.requests[0];
    expect(request?.headers[':path']).toBe('/inference.GRPCInferenceService/ModelInfer');
    expect(request?.headers.te).toBe('trailers');
    expect(server.peers[0]?.requests[1]?.headers[':authority']).toBe(server.url);
  });

  it('sends a 1 MiB request within a tiny window and the smallest frame size, following a changed INITIAL_WINDOW_SIZE', async () => {
    let raised = false;
    const server = await rawServer(
      (peer) => {
        peer.onData = ({ id, payload }) => {
          peer.credit(0, payload.byteLength);
          if (!raised && peer.requests.length === 1) {
            // During the large request (the second), grow every open stream's window by SETTINGS
            // once, then by WINDOW_UPDATE as bytes arrive.
            raised = true;
            peer.settings([[SETTINGS_INITIAL_WINDOW_SIZE, 30_000]]);
          } else if (raised) peer.credit(id, payload.byteLength);
        };
        peer.onRequest = (request) => peer.answer(request.id, answerOf(u32(request.bytes)));
      },
      [
        [SETTINGS_INITIAL_WINDOW_SIZE, 1000],
        [SETTINGS_MAX_FRAME_SIZE, 16_384],
      ],
    );
    const made = transport(server.url);
    // A first call settles the settings (before them the client may use HTTP/2's default window).
    expect(Buffer.from((await made.infer(small)).outputs[0]?.raw ?? []).readUInt32BE(0)).toBeGreaterThan(0);
    const payload = new Uint8Array(1024 * 1024).map((_, index) => index % 251);
    const response = await made.infer({
      model: 'm',
      inputs: [{ name: 'IN', datatype: 'UINT8', shape: [payload.byteLength], raw: payload }],
    });
    const peer = server.peers[0] as RawPeer;
    const received = Buffer.concat(peer.requests[1]?.body ?? []);
    expect(Buffer.from(response.outputs[0]?.raw ?? []).readUInt32BE(0)).toBe(received.byteLength);
    expect(received.byteLength).toBeGreaterThan(payload.byteLength);
    // The tensor arrives whole, at the end of the request.
    expect(received.subarray(received.byteLength - payload.byteLength).equals(Buffer.from(payload))).toBe(
      true,
    );
    expect(peer.overruns).toBe(0);
    expect(peer.maxDataFrame).toBeLessThanOrEqual(16_384);
  });

  it('keeps to MAX_CONCURRENT_STREAMS 1: further calls wait their turn, and one whose deadline passes while waiting is never sent', async () => {
    // Streams opened (HEADERS seen) and not yet answered, when each new one opens.
    let opened = 0;
    let answered = 0;
    let maxOpen = 0;
    let held: number | undefined;
    const server = await rawServer(
      (peer) => {
        peer.onHeaders = () => {
          opened++;
          maxOpen = Math.max(maxOpen, opened - answered);
        };
        peer.onRequest = (request) => {
          if (request.headers['x-hold'] === '1') {
            held = request.id;
            return;
          }
          peer.answer(request.id, answerOf(new Uint8Array([request.id])));
          answered++;
        };
      },
      [[SETTINGS_MAX_CONCURRENT_STREAMS, 1]],
    );
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    maxOpen = 0;
    const answers = await Promise.all([firstByte(made), firstByte(made), firstByte(made), firstByte(made)]);
    expect(answers).toEqual([3, 5, 7, 9]);
    expect(maxOpen).toBe(1);

    const holding = made.infer(small, { headers: { 'x-hold': '1' } });
    await expect.poll(() => held).toBe(11);
    const late = await failure(made.infer(small, { timeoutMs: 50 }));
    expect(late.code).toBe(ErrorCode.DeadlineExceeded);
    const peer = server.peers[0] as RawPeer;
    peer.answer(11, answerOf(new Uint8Array([11])));
    expect((await holding).outputs[0]?.raw?.[0]).toBe(11);
    // The expired call never took a stream id: the next one is 13.
    expect(await firstByte(made)).toBe(13);
  });

  it('fails a call over the bound of the wait queue at once with RESOURCE_EXHAUSTED-like BUSY', async () => {
    const server = await rawServer(() => {}, [[SETTINGS_MAX_CONCURRENT_STREAMS, 1]]);
    const closes: number[] = [];
    const handler: StreamHandler = {
      onHeaders() {},
      onData() {},
      onClose(kind) {
        closes.push(kind);
      },
    };
    let ready = false;
    const socket = connect({ host: '127.0.0.1', port: server.port });
    const session = new H2Session(socket, {
      authority: server.url,
      scheme: 'http',
      maxWaiting: 1,
      events: {
        onReady: () => {
          ready = true;
        },
        onDraining: () => {},
        onClose: () => {},
      },
    });
    cleanups.push(() => session.destroy());
    await expect.poll(() => ready).toBe(true);
    const body = [grpcFrame(new Uint8Array([1]))];
    session.request(handler, '/x/Y', undefined, undefined, body);
    session.request(handler, '/x/Y', undefined, undefined, body);
    expect(closes).toEqual([]);
    session.request(handler, '/x/Y', undefined, undefined, body);
    expect(closes).toEqual([CLOSE_BUSY]);
    expect(session.activeStreams).toBe(2);
  });

  it('on GOAWAY, sends a call above its last stream id once more on a new connection, finishes the others, and dials anew', async () => {
    const server = await rawServer((peer) => {
      const waiting: number[] = [];
      peer.onRequest = ({ id }) => {
        if (server.peers.length > 1 || id === 1) {
          peer.answer(id, answerOf(new Uint8Array([id])));
          return;
        }
        waiting.push(id);
        if (waiting.length < 2) return;
        const goaway = Buffer.alloc(8);
        goaway.writeUInt32BE(waiting[0] as number, 0);
        peer.send(GOAWAY, 0, 0, goaway);
        peer.answer(waiting[0] as number, answerOf(new Uint8Array([waiting[0] as number])));
      };
    });
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    const [kept, refused] = await Promise.allSettled([firstByte(made), firstByte(made)]);
    expect(kept).toEqual({ status: 'fulfilled', value: 3 });
    // Stream 5 was never processed: it went again, as stream 1 of the second connection.
    expect(refused).toEqual({ status: 'fulfilled', value: 1 });
    expect(server.peers).toHaveLength(2);
    expect(server.peers[0]?.requests.map((request) => request.id)).toEqual([1, 3, 5]);
    expect(await firstByte(made)).toBe(3);
  });

  it('fails a call refused by GOAWAY twice with UNAVAILABLE (one transparent retry, not more)', async () => {
    const server = await rawServer((peer) => {
      peer.onRequest = () => peer.send(GOAWAY, 0, 0, Buffer.alloc(8));
    });
    const made = transport(server.url);
    const error = await failure(made.infer(small));
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(error.message).toMatch(/GOAWAY/);
    expect(server.peers).toHaveLength(2);
    await expect.poll(() => made.connectivityState()).toBe('idle');
  });

  it("maps the server's RST_STREAM as gRPC does, and the connection carries on", async () => {
    // 7 is REFUSED_STREAM: never processed, so sent once more (stream 3, then 5; stream 9, then 11).
    const codes = [8, 7, 7, 1, 7];
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        const code = codes.shift();
        if (code === undefined) peer.answer(id, answerOf(new Uint8Array([id])));
        else peer.send(RST_STREAM, 0, id, u32(code));
      };
    });
    const made = transport(server.url);
    expect((await failure(made.infer(small))).code).toBe(ErrorCode.Cancelled);
    expect((await failure(made.infer(small))).code).toBe(ErrorCode.Unavailable);
    expect((await failure(made.infer(small))).code).toBe(ErrorCode.Internal);
    expect(await firstByte(made)).toBe(11);
    expect(await firstByte(made)).toBe(13);
    expect(server.peers).toHaveLength(1);
  });

  it("answers the server's PING with an ACK of the same payload", async () => {
    const server = await rawServer((peer) => {
      // After the SETTINGS frame that opens the connection (sent once setup returns).
      queueMicrotask(() => peer.send(PING, 0, 0, Buffer.from('pingpong')));
      peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([1])));
    });
    const made = transport(server.url);
    made.connectivityState(true);
    await expect
      .poll(() =>
        server.peers[0]?.frames.some(
          (frame) => frame.type === PING && frame.flags === ACK && frame.payload.toString() === 'pingpong',
        ),
      )
      .toBe(true);
  });

  it('answers a frame that breaks the protocol with GOAWAY and the error code, and fails the calls on the connection', async () => {
    const cases: [string, (peer: RawPeer, id: number) => void, number][] = [
      ['DATA on stream 0', (peer) => peer.send(DATA, 0, 0, Buffer.from([1])), 0x1],
      [
        'a header block that does not decode',
        (peer, id) => peer.send(HEADERS, END_HEADERS, id, Buffer.from([0x80])),
        0x9,
      ],
      ['a PING of 7 bytes', (peer) => peer.send(PING, 0, 0, Buffer.alloc(7)), 0x6],
      [
        'HEADERS interrupted before END_HEADERS',
        (peer, id) => {
          peer.send(HEADERS, 0, id, peer.encoder.encode([[':status', '200']]));
          peer.send(PING, 0, 0, Buffer.alloc(8));
        },
        0x1,
      ],
    ];
    for (const [, misbehave, code] of cases) {
      const server = await rawServer((peer) => {
        peer.onRequest = ({ id }) => misbehave(peer, id);
      });
      const made = transport(server.url);
      const error = await failure(made.infer(small));
      expect(error.code).toBe(ErrorCode.Internal);
      expect(error.message).toMatch(/HTTP\/2 protocol error from the server/);
      await expect
        .poll(() => server.peers[0]?.frames.find((frame) => frame.type === GOAWAY)?.payload.readUInt32BE(4))
        .toBe(code);
    }
  });

  it('follows a HEADER_TABLE_SIZE of 0: its header blocks then never use the dynamic table', async () => {
    const server = await rawServer(
      (peer) => {
        peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([id])));
      },
      [[SETTINGS_HEADER_TABLE_SIZE, 0]],
      0,
    );
    const made = transport(server.url);
    expect(await firstByte(made)).toBe(1);
    expect(await firstByte(made)).toBe(3);
    expect(await firstByte(made)).toBe(5);
    expect(server.peers[0]?.decodeErrors).toBe(0);
    expect(server.peers[0]?.requests[2]?.headers[':path']).toBe('/inference.GRPCInferenceService/ModelInfer');
  });

  it('moves to a new connection once the stream ids run out', async () => {
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => peer.answer(id, answerOf(new Uint8Array([1])));
    });
    const engine = new H2Engine(
      [{ target: server.url, host: '127.0.0.1', port: server.port, secure: false }],
      {
        secure: false,
        tls: undefined,
        compression: 'none',
        loadBalancing: 'pick_first',
        keepalive: { timeMs: 60_000, timeoutMs: 20_000, permitWithoutCalls: false },
        backoff: { initialMs: 50, maxMs: 200 },
        firstStreamId: 0x7ffffffd,
      },
    );
    cleanups.push(() => engine.close());
    const options = { path: '/x/Y', headers: {}, maxMessageBytes: 1 << 20 };
    const body = [grpcFrame(new Uint8Array([1]))];
    for (let i = 0; i < 3; i++) await engine.unary(body, options);
    expect(server.peers[0]?.requests.map((request) => request.id)).toEqual([0x7ffffffd, 0x7fffffff]);
    expect(server.peers[1]?.requests.map((request) => request.id)).toEqual([0x7ffffffd]);
  });

  it('holds back the stream window credit while a call is paused, and gives it all back on resume', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const server = await rawServer((peer) => {
      peer.onRequest = ({ id }) => {
        peer.send(HEADERS, END_HEADERS, id, peer.encoder.encode([[':status', '200']]));
        // 9 MiB: more than half the 16 MiB stream window, so an unpaused call would credit some.
        for (let i = 0; i < 9; i++) peer.send(DATA, 0, id, chunk);
      };
    });
    let received = 0;
    let ready = false;
    const socket = connect({ host: '127.0.0.1', port: server.port });
    const session = new H2Session(socket, {
      authority: server.url,
      scheme: 'http',
      events: {
        onReady: () => {
          ready = true;
        },
        onDraining: () => {},
        onClose: () => {},
      },
    });
    cleanups.push(() => session.destroy());
    await expect.poll(() => ready).toBe(true);
    const stream = session.request(
      {
        onHeaders() {
          session.pause(stream);
        },
        onData(data) {
          received += data.byteLength;
        },
        onClose() {},
      },
      '/x/Y',
      undefined,
      undefined,
      [grpcFrame(new Uint8Array([1]))],
    );
    await expect.poll(() => received, { timeout: 10_000 }).toBe(9 * chunk.byteLength);
    session.resume(stream);
    const peer = server.peers[0] as RawPeer;
    const streamCredit = () =>
      peer.frames
        .filter((frame) => frame.type === WINDOW_UPDATE && frame.id === 1)
        .map((frame) => frame.payload.readUInt32BE(0));
    await expect.poll(streamCredit).toEqual([9 * chunk.byteLength]);
  });
});
