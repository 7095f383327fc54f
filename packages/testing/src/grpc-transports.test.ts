// The reference server's gRPC semantics below the client libraries, on both transports: a raw
// node:http2 client sends exactly the frames, headers and prefixes a test needs.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { createTritonClient, type InfergateError } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GrpcTransportKind } from './grpc-listener.js';
import { MAX_CONCURRENT_STREAMS, SESSION_WINDOW, STREAM_WINDOW } from './h2-grpc-listener.js';
import { toWireParameters } from './internal/parameters.js';
import {
  ModelInferRequestSchema,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
} from './internal/proto.js';
import { runScript } from './run-script.js';
import { startTestServer, type TestServer } from './test-server.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PATH = '/inference.GRPCInferenceService';

interface RawAnswer {
  httpStatus: number;
  grpcStatus: string | undefined;
  grpcMessage: string | undefined;
  messages: Buffer[];
  /** The stream's RST_STREAM code once closed (0, NO_ERROR, also when none came). */
  rstCode: number;
}

function frame(message: Uint8Array, flag = 0): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out[0] = flag;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

function splitMessages(body: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  for (let offset = 0; offset + 5 <= body.byteLength; ) {
    const length = body.readUInt32BE(offset + 1);
    messages.push(body.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  return messages;
}

/** One call: `chunks` written one by one (each its own write), then the end of the request. */
async function rawCall(
  session: http2.ClientHttp2Session,
  method: string,
  chunks: readonly Buffer[],
  headers: http2.OutgoingHttpHeaders = {},
): Promise<RawAnswer> {
  const stream = session.request({
    ':method': 'POST',
    ':path': `${PATH}/${method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...headers,
  });
  const answer: RawAnswer = {
    httpStatus: 0,
    grpcStatus: undefined,
    grpcMessage: undefined,
    messages: [],
    rstCode: 0,
  };
  const read = (fields: http2.IncomingHttpHeaders) => {
    if (fields[':status'] !== undefined) answer.httpStatus = Number(fields[':status']);
    if (fields['grpc-status'] !== undefined) answer.grpcStatus = String(fields['grpc-status']);
    if (fields['grpc-message'] !== undefined) answer.grpcMessage = String(fields['grpc-message']);
  };
  stream.on('response', read);
  stream.on('trailers', read);
  const body: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => body.push(chunk));
  const closed = new Promise<void>((resolve) => stream.once('close', resolve));
  stream.on('error', () => {});
  for (const chunk of chunks) {
    stream.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  stream.end();
  await closed;
  answer.rstCode = stream.rstCode ?? 0;
  answer.messages = splitMessages(Buffer.concat(body));
  return answer;
}

const identityRequest = (values: number[], id = '') =>
  toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, {
      modelName: 'identity',
      id,
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [BigInt(values.length)] }],
      rawInputContents: [new Uint8Array(Float32Array.from(values).buffer)],
    }),
  );

const failRequest = (parameters: Record<string, string | number>) =>
  toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, { modelName: 'fail', parameters: toWireParameters(parameters) }),
  );

const outputOf = (message: Buffer | undefined) => {
  const response = fromBinary(ModelInferResponseSchema, message ?? Buffer.alloc(0));
  const raw = response.rawOutputContents[0] ?? new Uint8Array(0);
  return [...new Float32Array(Uint8Array.from(raw).buffer)];
};

/** Bounded wait for server-side state (expect.poll's bound from vitest.config.ts). */
const waitFor = (condition: () => boolean) => expect.poll(condition).toBe(true);

describe.each(['http2', 'lean', 'grpc-js'] as const)('the %s transport', (transport: GrpcTransportKind) => {
  let server: TestServer;
  let session: http2.ClientHttp2Session;

  beforeAll(async () => {
    server = await startTestServer({ transport });
    session = http2.connect(`http://${server.url}`);
    session.on('error', () => {});
  });

  afterAll(async () => {
    session.close();
    await server.stop();
  });

  it('reads a message cut over several DATA frames, and several messages in one', async () => {
    const whole = frame(identityRequest([1, 2, 3, 4]));
    const unary = await rawCall(session, 'ModelInfer', [
      whole.subarray(0, 3),
      whole.subarray(3, 20),
      whole.subarray(20),
    ]);
    expect(unary.grpcStatus).toBe('0');
    expect(outputOf(unary.messages[0])).toEqual([1, 2, 3, 4]);

    const [a, b, c] = [1, 2, 3].map((value) => frame(identityRequest([value], `r${value}`))) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    const stream = await rawCall(session, 'ModelStreamInfer', [
      Buffer.concat([a, b, c.subarray(0, 7)]),
      c.subarray(7),
    ]);
    expect(stream.grpcStatus).toBe('0');
    const ids = stream.messages.map(
      (message) => fromBinary(ModelStreamInferResponseSchema, message).inferResponse?.id,
    );
    expect(ids.sort()).toEqual(['r1', 'r2', 'r3']);
  });

  it('answers DEADLINE_EXCEEDED at the grpc-timeout and counts the call cancelled', async () => {
    const before = server.cancellations('fail');
    const answer = await rawCall(session, 'ModelInfer', [frame(failRequest({ delay_ms: 30_000 }))], {
      'grpc-timeout': '100m',
    });
    expect(answer.grpcStatus).toBe('4');
    await waitFor(() => server.cancellations('fail') === before + 1);
    expect(server.stats('fail').inFlight).toBe(0);
  });

  it('ends a ModelStreamInfer stream at its grpc-timeout and cancels the request in progress', async () => {
    const before = server.cancellations('fail');
    const answer = await rawCall(session, 'ModelStreamInfer', [frame(failRequest({ delay_ms: 30_000 }))], {
      'grpc-timeout': '100m',
    });
    expect(answer.grpcStatus).toBe('4');
    await waitFor(() => server.cancellations('fail') === before + 1);
    expect(server.stats('fail').inFlight).toBe(0);
  });

  it('stop() drops the calls still running after stopGraceMs and aborts their execution', async () => {
    const own = await startTestServer({ transport, stopGraceMs: 200 });
    const client = createTritonClient({ url: own.url });
    try {
      const call = client.infer('fail', [], { parameters: { fail_code: 0, delay_ms: 30_000 } }).then(
        () => 'OK',
        (error: InfergateError) => error.code,
      );
      await waitFor(() => own.stats('fail').inFlight === 1);
      await own.stop();
      expect(own.listening).toBe(false);
      expect(await call).toBe('UNAVAILABLE');
      await waitFor(() => own.stats('fail').inFlight === 0);
    } finally {
      await client.close();
    }
  });

  it('accepts gzip and deflate requests and records their encoding', async () => {
    for (const [encoding, pack] of [
      ['gzip', promisify(gzip)],
      ['deflate', promisify(deflate)],
    ] as const) {
      const packed = await pack(identityRequest([7, 8]));
      const answer = await rawCall(session, 'ModelInfer', [frame(packed, 1)], { 'grpc-encoding': encoding });
      expect(answer.grpcStatus).toBe('0');
      expect(outputOf(answer.messages[0])).toEqual([7, 8]);
      expect(server.calls.at(-1)?.metadata['grpc-encoding']).toBe(encoding);
    }
  });

  it('answers UNIMPLEMENTED for a message compressed with an unsupported encoding', async () => {
    const answer = await rawCall(session, 'ModelInfer', [frame(identityRequest([1]), 1)], {
      'grpc-encoding': 'snappy',
    });
    expect(answer.grpcStatus).toBe('12');
  });

  it('answers RESOURCE_EXHAUSTED for a message over the size limit, before reading it', async () => {
    const prefix = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
    const answer = await rawCall(session, 'ModelInfer', [prefix, Buffer.alloc(64)]);
    expect(answer.grpcStatus).toBe('8');
    expect(decodeURIComponent(answer.grpcMessage ?? '')).toContain('larger than max');
  });

  it('answers UNIMPLEMENTED for an unknown method and HTTP 415 for a non-gRPC content type', async () => {
    const unknown = await rawCall(session, 'NoSuchMethod', [frame(new Uint8Array(0))]);
    expect(unknown.grpcStatus).toBe('12');
    const wrongType = await rawCall(session, 'ServerLive', [frame(new Uint8Array(0))], {
      'content-type': 'application/json',
    });
    expect(wrongType.httpStatus).toBe(415);
    expect(wrongType.grpcStatus).toBeUndefined();
  });

  it('records -bin metadata as base64 and percent-encodes grpc-message', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251]);
    const text = 'naïve 100%\nsecond line';
    const answer = await rawCall(
      session,
      'ModelInfer',
      [frame(failRequest({ fail_code: 3, fail_message: text }))],
      { 'x-blob-bin': bytes.toString('base64').replace(/=+$/, '') },
    );
    expect(answer.grpcStatus).toBe('3');
    expect(answer.grpcMessage).toMatch(/^[\x20-\x7e]*$/);
    expect(decodeURIComponent(answer.grpcMessage ?? '')).toBe(text);
    expect(server.calls.at(-1)?.metadata['x-blob-bin']).toBe(bytes.toString('base64'));
  });
});

describe.each(['http2', 'lean'] as const)('the %s transport, HTTP/2 itself', (transport) => {
  it('caps the streams a connection may open at once', async () => {
    const server = await startTestServer({ transport });
    const session = http2.connect(`http://${server.url}`);
    try {
      await new Promise((resolve) => session.once('remoteSettings', resolve));
      expect(session.remoteSettings.maxConcurrentStreams).toBe(MAX_CONCURRENT_STREAMS);
    } finally {
      session.close();
      await server.stop();
    }
  });

  it('lets a request with a 1 MiB tensor in without waiting for a WINDOW_UPDATE', async () => {
    const server = await startTestServer({ transport });
    const session = http2.connect(`http://${server.url}`);
    try {
      await new Promise((resolve) => session.once('remoteSettings', resolve));
      // The tensor, its request's head (names, shape, datatype) and the gRPC prefix.
      expect(session.remoteSettings.initialWindowSize).toBeGreaterThanOrEqual((1 << 20) + 1024);
      expect(STREAM_WINDOW).toBe(session.remoteSettings.initialWindowSize);
      expect(SESSION_WINDOW).toBeGreaterThanOrEqual(16 * STREAM_WINDOW);
    } finally {
      session.close();
      await server.stop();
    }
  });

  it('ends every unary answer with its trailers, also one that outruns the client window', async () => {
    // The server flushes a unary answer's trailers by closing the stream once they are submitted: it
    // must not reset a stream whose answer has not all gone out. A 16 KiB client window makes the
    // 256 KiB answers wait for WINDOW_UPDATEs, eight of them at once on one connection.
    const server = await startTestServer({ transport });
    const session = http2.connect(`http://${server.url}`, { settings: { initialWindowSize: 16_384 } });
    session.on('error', () => {});
    try {
      const sizes = [4, 65_536, 16, 65_536, 65_536, 1, 65_536, 256];
      const answers = await Promise.all(
        sizes.map((size, call) => {
          const values = Array.from({ length: size }, (_, index) => index + call);
          return rawCall(session, 'ModelInfer', [frame(identityRequest(values))]).then((answer) => ({
            answer,
            values,
          }));
        }),
      );
      for (const { answer, values } of answers) {
        expect(answer).toMatchObject({
          httpStatus: 200,
          grpcStatus: '0',
          rstCode: http2.constants.NGHTTP2_NO_ERROR,
        });
        expect(answer.messages).toHaveLength(1);
        expect(outputOf(answer.messages[0])).toEqual(values);
      }
    } finally {
      session.close();
      await server.stop();
    }
  });
});

describe('the http2 transport', () => {
  it('does not load grpc-js; the grpc-js transport does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'infergate-transport-'));
    try {
      const script = join(dir, 'modules.mts');
      const entry = join(ROOT, 'packages', 'testing', 'src', 'index.ts');
      await writeFile(
        script,
        [
          "import { createRequire } from 'node:module';",
          `import { startTestServer } from ${JSON.stringify(entry)};`,
          "const server = await startTestServer({ transport: process.argv[2] as 'http2' | 'grpc-js' });",
          'const cache = Object.keys(createRequire(import.meta.url).cache);',
          "console.log('grpc-js loaded: ' + cache.some((file) => file.includes('grpc-js')));",
          'await server.stop();',
        ].join('\n'),
      );
      const lean = await runScript(script, { cwd: ROOT, args: ['http2'], killAfterMs: 30_000 });
      const old = await runScript(script, { cwd: ROOT, args: ['grpc-js'], killAfterMs: 30_000 });
      expect(lean.stdout).toContain('grpc-js loaded: false');
      expect(old.stdout).toContain('grpc-js loaded: true');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown transport', async () => {
    await expect(startTestServer({ transport: 'grpc' as 'http2' })).rejects.toThrow(/transport/);
  });
});
