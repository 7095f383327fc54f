// The lean transport's HTTP/2 below the client libraries: a raw TCP peer writes the frames a test
// needs and reads every frame back; the server's socket writes are counted where one write matters.
import * as net from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { createTritonClient } from '@infergate/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeHeaderBlock } from './h2-grpc-lean-frames.js';
import { toWireParameters } from './internal/parameters.js';
import { ModelInferRequestSchema } from './internal/proto.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

interface Frame {
  type: number;
  flags: number;
  id: number;
  payload: Buffer;
}

function frame(type: number, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.byteLength, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(id, 5);
  return Buffer.concat([head, payload]);
}

function parseFrames(bytes: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let at = 0;
  while (bytes.byteLength - at >= 9) {
    const length = bytes.readUIntBE(at, 3);
    if (bytes.byteLength - at < 9 + length) break;
    frames.push({
      type: bytes[at + 3] as number,
      flags: bytes[at + 4] as number,
      id: bytes.readUInt32BE(at + 5) & 0x7fffffff,
      payload: bytes.subarray(at + 9, at + 9 + length),
    });
    at += 9 + length;
  }
  return { frames, rest: bytes.subarray(at) };
}

/** A raw HTTP/2 client: writes what it is given, collects every frame the server sends. */
class RawPeer {
  readonly socket: net.Socket;
  readonly frames: Frame[] = [];
  #pending = Buffer.alloc(0);
  closed = false;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      const { frames, rest } = parseFrames(Buffer.concat([this.#pending, chunk]));
      this.#pending = Buffer.from(rest);
      this.frames.push(...frames);
    });
    this.socket.on('close', () => {
      this.closed = true;
    });
    this.socket.on('error', () => {});
  }

  /** The preface and an empty SETTINGS. */
  start(): void {
    this.socket.write(Buffer.concat([PREFACE, frame(0x4, 0, 0)]));
  }

  /**
   * A ModelInfer call on `id`: HEADERS, then the framed request in one DATA with END_STREAM. FP32
   * INPUT0 of `values` for `model` (shape [n], or [1, n] for a batching model), `extra` headers.
   */
  modelInfer(id: number, values: number[], model = 'identity', extra: [string, string][] = []): void {
    const block = encodeHeaderBlock([
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', '/inference.GRPCInferenceService/ModelInfer'],
      [':authority', 'localhost'],
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
      ...extra,
    ]);
    const shape = model === 'identity' ? [BigInt(values.length)] : [1n, BigInt(values.length)];
    const message = toBinary(
      ModelInferRequestSchema,
      create(ModelInferRequestSchema, {
        modelName: model,
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape }],
        rawInputContents: [new Uint8Array(Float32Array.from(values).buffer)],
      }),
    );
    const body = Buffer.alloc(5 + message.byteLength);
    body.writeUInt32BE(message.byteLength, 1);
    body.set(message, 5);
    this.socket.write(Buffer.concat([frame(0x1, 0x4, id, block), frame(0x0, 0x1, id, body)]));
  }

  framesOf(id: number): Frame[] {
    return this.frames.filter((each) => each.id === id);
  }
}

const servers: TestServer[] = [];
const peers: RawPeer[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const peer of peers.splice(0)) peer.socket.destroy();
  for (const server of servers.splice(0)) await server.stop();
});

async function leanServer(options: TestServerOptions = {}): Promise<TestServer> {
  const server = await startTestServer({ transport: 'lean', ...options });
  servers.push(server);
  return server;
}

function peerOf(server: TestServer): RawPeer {
  const peer = new RawPeer(Number(server.url.split(':')[1]));
  peers.push(peer);
  return peer;
}

/** Bounded wait for a condition (expect.poll's bound from vitest.config.ts). */
const waitFor = (condition: () => boolean) => expect.poll(condition).toBe(true);

describe('the lean transport', () => {
  it('writes a unary answer, HEADERS, DATA and trailers, to its socket in one write', async () => {
    const server = await leanServer();
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const input = { name: 'INPUT0', datatype: 'FP32' as const, shape: [4], data: [1, 2, 3, 4] };
      await client.infer('identity', [input]);
      // The server's socket writes: corked, then one writev (node:http2 and the client's engine
      // write through their native handles or their own sockets' writes; each writev is told apart by
      // what it carries).
      const writev = vi.spyOn(net.Socket.prototype as unknown as { _writev: () => void }, '_writev');
      const response = await client.infer('identity', [input]);
      expect(response.outputs[0]?.data).toEqual(new Float32Array([1, 2, 3, 4]));
      // Which writev carried the answer: its chunks hold a HEADERS, a DATA and a HEADERS with
      // END_STREAM of one odd stream.
      const carriers = writev.mock.calls
        .map((call) => {
          // Node turns the entries into the buffers themselves while writing them.
          const entries = (call as unknown as [(Buffer | { chunk: Buffer })[]])[0];
          const chunks = entries.map((entry) => (Buffer.isBuffer(entry) ? entry : entry.chunk));
          return parseFrames(Buffer.concat(chunks)).frames;
        })
        .filter((frames) => frames.some((each) => each.type === 0x0 && each.id % 2 === 1));
      expect(carriers).toHaveLength(1);
      const kinds = (carriers[0] as Frame[]).map((each) => [each.type, each.flags & 0x1]);
      expect(kinds).toEqual([
        [0x1, 0],
        [0x0, 0],
        [0x1, 1],
      ]);
    } finally {
      await client.close();
    }
  });

  it('acknowledges SETTINGS, answers PING and serves a call from a raw peer', async () => {
    const server = await leanServer();
    const peer = peerOf(server);
    peer.start();
    peer.socket.write(frame(0x6, 0, 0, Buffer.from('12345678')));
    peer.modelInfer(1, [5, 6]);
    await waitFor(() => peer.framesOf(1).some((each) => each.type === 0x1 && (each.flags & 0x1) !== 0));
    const connection = peer.framesOf(0);
    // Its SETTINGS first, then our SETTINGS' ACK and the PING's answer with the same payload.
    expect(connection[0]?.type).toBe(0x4);
    expect(connection.some((each) => each.type === 0x4 && each.flags === 0x1)).toBe(true);
    expect(
      connection.some(
        (each) => each.type === 0x6 && each.flags === 0x1 && each.payload.toString() === '12345678',
      ),
    ).toBe(true);
    const stream = peer.framesOf(1).map((each) => each.type);
    expect(stream).toEqual([0x1, 0x0, 0x1]);
  });

  it('refuses streams over its cap and even-numbered ones end the connection', async () => {
    const server = await leanServer();
    const peer = peerOf(server);
    peer.start();
    peer.modelInfer(2, [1]);
    // A client may not open an even stream: GOAWAY PROTOCOL_ERROR, then the connection ends.
    await waitFor(() => peer.closed);
    const away = peer.frames.find((each) => each.type === 0x7);
    expect(away?.payload.readUInt32BE(4)).toBe(0x1);
  });

  it('drops a connection whose preface is not HTTP/2', async () => {
    const server = await leanServer();
    const peer = peerOf(server);
    peer.socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await waitFor(() => peer.closed);
    expect(peer.frames.some((each) => each.type === 0x1)).toBe(false);
  });

  it('cancels a call whose stream the client resets, and answers the next', async () => {
    const server = await leanServer();
    const peer = peerOf(server);
    peer.start();
    // `fail` with a delay holds its call long enough for the RST_STREAM to arrive first.
    const block = encodeHeaderBlock([
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', '/inference.GRPCInferenceService/ModelInfer'],
      [':authority', 'localhost'],
      ['content-type', 'application/grpc'],
    ]);
    const message = toBinary(
      ModelInferRequestSchema,
      create(ModelInferRequestSchema, {
        modelName: 'fail',
        parameters: toWireParameters({ delay_ms: 30_000 }),
      }),
    );
    const body = Buffer.alloc(5 + message.byteLength);
    body.writeUInt32BE(message.byteLength, 1);
    body.set(message, 5);
    peer.socket.write(Buffer.concat([frame(0x1, 0x4, 1, block), frame(0x0, 0x1, 1, body)]));
    await waitFor(() => server.stats('fail').inFlight === 1);
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(0x8, 0);
    peer.socket.write(frame(0x3, 0, 1, cancel));
    await waitFor(() => server.cancellations('fail') === 1);
    await waitFor(() => server.stats('fail').inFlight === 0);
    peer.modelInfer(3, [7]);
    await waitFor(() => peer.framesOf(3).some((each) => each.type === 0x1 && (each.flags & 0x1) !== 0));
    expect(peer.framesOf(1).some((each) => each.type === 0x0)).toBe(false);
  });

  it('holds a call cancelled during its execution: its answer, built ahead, is never sent', async () => {
    // simulated_gpu's answer is built while the execution runs (decision 0023); 300 ms leaves the
    // RST_STREAM time to arrive first.
    const server = await leanServer({ simulatedGpu: { baseMs: 300, perRowMs: 0 } });
    const peer = peerOf(server);
    peer.start();
    peer.modelInfer(1, [1, 2], 'simulated_gpu');
    await waitFor(() => server.gpu.stats().executions === 1);
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(0x8, 0);
    peer.socket.write(frame(0x3, 0, 1, cancel));
    await waitFor(() => server.cancellations('simulated_gpu') === 1);
    // The execution runs to its end (as GPU work does), then the call leaves the books.
    await waitFor(() => server.gpu.stats().wallMs > 0);
    await waitFor(() => server.stats('simulated_gpu').inFlight === 0);
    // Frames arrive in order on the connection: a later answer means anything for stream 1 came first.
    peer.modelInfer(3, [7]);
    await waitFor(() => peer.framesOf(3).some((each) => each.type === 0x1 && (each.flags & 0x1) !== 0));
    expect(peer.framesOf(1)).toEqual([]);
  });

  it('sends only the status of a call whose deadline passes during its execution', async () => {
    const server = await leanServer({ simulatedGpu: { baseMs: 300, perRowMs: 0 } });
    const peer = peerOf(server);
    peer.start();
    peer.modelInfer(1, [1, 2], 'simulated_gpu', [['grpc-timeout', '20m']]);
    await waitFor(() => peer.framesOf(1).length > 0);
    await waitFor(() => server.gpu.stats().wallMs > 0);
    await waitFor(() => server.stats('simulated_gpu').inFlight === 0);
    peer.modelInfer(3, [7]);
    await waitFor(() => peer.framesOf(3).some((each) => each.type === 0x1 && (each.flags & 0x1) !== 0));
    // One trailers-only HEADERS (END_STREAM) carrying DEADLINE_EXCEEDED (grpc-status 4), no DATA.
    const frames = peer.framesOf(1);
    expect(frames.map((each) => [each.type, each.flags & 0x1])).toEqual([[0x1, 0x1]]);
    const block = (frames[0] as Frame).payload.toString('latin1');
    expect(block).toContain('grpc-status');
    expect(block).toMatch(/grpc-status.4/);
  });

  it('sends nothing for a call cancelled while it waits for the slot, and answers the one running', async () => {
    const server = await leanServer({ simulatedGpu: { baseMs: 300, perRowMs: 0 } });
    const peer = peerOf(server);
    peer.start();
    peer.modelInfer(1, [1, 2], 'simulated_gpu');
    await waitFor(() => server.gpu.stats().executions === 1);
    peer.modelInfer(3, [3, 4], 'simulated_gpu');
    await waitFor(() => server.gpu.stats().queued === 1);
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(0x8, 0);
    peer.socket.write(frame(0x3, 0, 3, cancel));
    await waitFor(() => server.gpu.stats().queued === 0);
    await waitFor(() => peer.framesOf(1).some((each) => each.type === 0x1 && (each.flags & 0x1) !== 0));
    // Stream 1: its answer, whole (HEADERS, DATA, trailers); stream 3: nothing; one execution only.
    expect(peer.framesOf(1).map((each) => each.type)).toEqual([0x1, 0x0, 0x1]);
    await waitFor(() => server.stats('simulated_gpu').inFlight === 0);
    peer.modelInfer(5, [7]);
    await waitFor(() => peer.framesOf(5).some((each) => each.type === 0x1 && (each.flags & 0x1) !== 0));
    expect(peer.framesOf(3)).toEqual([]);
    expect(server.gpu.stats().executions).toBe(1);
  });
});

describe.each(['lean', 'http2'] as const)(
  "simulated_gpu's answer built during its execution (%s)",
  (transport) => {
    it('leaves once the execution has ended, with the right values, and counts its statistics', async () => {
      const server = await startTestServer({ transport, simulatedGpu: { baseMs: 40, perRowMs: 0 } });
      servers.push(server);
      const client = createTritonClient({ url: server.url, enableGpuIpc: false });
      try {
        const data = new Float32Array([1, 2, 3, 4, 5, 6]);
        const response = await client.infer('simulated_gpu', [
          { name: 'INPUT0', datatype: 'FP32', shape: [2, 3], data },
        ]);
        // The slot's wall time is added when the execution ends: an answer sent before would find none.
        expect(server.gpu.stats().wallMs).toBeGreaterThan(0);
        expect(Array.from(response.outputs[0]?.data as Float32Array)).toEqual([2, 4, 6, 8, 10, 12]);
        await waitFor(() => server.stats('simulated_gpu').inFlight === 0);
        const [statistics] = await client.modelStatistics('simulated_gpu');
        expect(statistics?.inference.success.count).toBe(1);
        // compute_infer runs from the slot's start to the execution's end, not to the answer's build.
        expect(statistics?.inference.computeInfer.ms).toBeGreaterThanOrEqual(server.gpu.costMs(2));
      } finally {
        await client.close();
      }
    });

    it('reports a call cancelled during its execution as cancelled, once', async () => {
      const server = await startTestServer({ transport, simulatedGpu: { baseMs: 300, perRowMs: 0 } });
      servers.push(server);
      const client = createTritonClient({ url: server.url, enableGpuIpc: false });
      try {
        const controller = new AbortController();
        const call = client.infer(
          'simulated_gpu',
          [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: new Float32Array([1, 2]) }],
          { signal: controller.signal },
        );
        await waitFor(() => server.gpu.stats().executions === 1);
        controller.abort();
        await expect(call).rejects.toMatchObject({ code: 'CANCELLED' });
        await waitFor(() => server.cancellations('simulated_gpu') === 1);
        await waitFor(() => server.gpu.stats().wallMs > 0 && server.stats('simulated_gpu').inFlight === 0);
        expect(server.cancellations('simulated_gpu')).toBe(1);
      } finally {
        await client.close();
      }
    });
  },
);
