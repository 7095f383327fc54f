// The http2 engine against a bare node:http2 server that answers as a gRPC server would, including
// the ways one can fail: trailers-only errors with status details, HTTP errors without a gRPC
// status, an OK without a message, an answer over the size limit, a server that never answers.
import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcTransport } from '../create-grpc-transport.js';
import { ErrorCode, InfergateError } from '../errors.js';
import {
  ModelInferRequestSchema,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
} from '../gen/grpc_service_pb.js';
import { writeFrameHeader } from './grpc-frames.js';

type Behaviour = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => void;

let server: Http2Server;
let url: string;
let behaviour: Behaviour;
let lastHeaders: IncomingHttpHeaders = {};
let lastBody = Buffer.alloc(0);
let closedStreams = 0;

function frame(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  writeFrameHeader(out, 0, message.byteLength);
  out.set(message, 5);
  return out;
}

const answer = (raw: Uint8Array) =>
  toBinary(
    ModelInferResponseSchema,
    create(ModelInferResponseSchema, {
      modelName: 'm',
      outputs: [{ name: 'OUT', datatype: 'UINT8', shape: [BigInt(raw.byteLength)] }],
      rawOutputContents: [raw],
    }),
  );

const ok = (stream: ServerHttp2Stream, ...messages: Uint8Array[]) => {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  for (const message of messages) {
    const framed = frame(message);
    // Two writes, so the message crosses DATA frames.
    stream.write(framed.subarray(0, 3));
    stream.write(framed.subarray(3));
  }
  stream.end();
};

beforeAll(async () => {
  server = createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('close', () => closedStreams++);
    stream.on('end', () => {
      lastHeaders = headers;
      lastBody = Buffer.concat(chunks);
      if (!stream.closed) behaviour(stream, headers, lastBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const input = [{ name: 'IN', datatype: 'UINT8' as const, shape: [3], raw: new Uint8Array([1, 2, 3]) }];

function transport(extra: { maxMessageBytes?: number; timeoutMs?: number } = {}) {
  return createGrpcTransport({
    url,
    engine: 'http2',
    enableGpuIpc: false,
    headers: { 'x-tenant': 'acme' },
    accessToken: 'sesame',
    ...extra,
  });
}

async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(InfergateError);
    return error as InfergateError;
  }
  throw new Error('the call did not fail');
}

describe('engine "http2"', () => {
  it('sends a gRPC request (headers, metadata, deadline, framed body) and reads the answer', async () => {
    behaviour = (stream) => ok(stream, answer(new Uint8Array([7, 8, 9])));
    const t = transport({ timeoutMs: 5000 });
    try {
      const response = await t.infer({ model: 'm', inputs: input }, { headers: { 'x-call': 'one' } });
      expect(Array.from(response.outputs[0]?.raw ?? [])).toEqual([7, 8, 9]);
      expect(lastHeaders[':path']).toBe('/inference.GRPCInferenceService/ModelInfer');
      expect(lastHeaders['content-type']).toBe('application/grpc');
      expect(lastHeaders.te).toBe('trailers');
      expect(lastHeaders['grpc-timeout']).toMatch(/^\d+m$/);
      expect(lastHeaders['x-tenant']).toBe('acme');
      expect(lastHeaders['x-call']).toBe('one');
      expect(lastHeaders['triton-grpc-protocol-triton-access-token']).toBe('sesame');
      expect(lastBody.readUInt32BE(1)).toBe(lastBody.byteLength - 5);
      const sent = fromBinary(ModelInferRequestSchema, lastBody.subarray(5));
      expect(sent.modelName).toBe('m');
      expect(Array.from(sent.rawInputContents[0] ?? [])).toEqual([1, 2, 3]);
    } finally {
      await t.close();
    }
  });

  it('reads an answer with parameters, which the hand-written reader leaves to the protobuf runtime', async () => {
    // The first call of this file that needs grpc-wire.ts: it loads once the answer is in.
    const withParameters = toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, {
        modelName: 'm',
        parameters: { sequence_end: { parameterChoice: { case: 'boolParam', value: true } } },
        outputs: [{ name: 'OUT', datatype: 'UINT8', shape: [1n] }],
        rawOutputContents: [new Uint8Array([5])],
      }),
    );
    behaviour = (stream) => ok(stream, withParameters);
    const t = transport({ timeoutMs: 5000 });
    try {
      const response = await t.infer({ model: 'm', inputs: input }, {});
      expect(response.parameters).toEqual({ sequence_end: true });
      expect(Array.from(response.outputs[0]?.raw ?? [])).toEqual([5]);
    } finally {
      await t.close();
    }
  });

  it('maps a trailers-only error with its message and grpc-status-details-bin', async () => {
    const details = Buffer.from([8, 5, 18, 4, 0x67, 0x6f, 0x6e, 0x65]);
    behaviour = (stream) =>
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '5',
          'grpc-message': 'model%20%27m%27%20is%20gone',
          'grpc-status-details-bin': details.toString('base64'),
        },
        { endStream: true },
      );
    const t = transport();
    try {
      const error = await failure(t.infer({ model: 'm', inputs: input }));
      expect(error.code).toBe(ErrorCode.NotFound);
      expect(error.grpcCode).toBe(5);
      expect(error.message).toContain("model 'm' is gone");
      const cause = error.cause as { metadata: Record<string, unknown> };
      expect(cause.metadata['grpc-status-details-bin']).toEqual(details);
    } finally {
      await t.close();
    }
  });

  it('maps an HTTP error without a gRPC status (503 → UNAVAILABLE)', async () => {
    behaviour = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
    const t = transport();
    try {
      expect((await failure(t.infer({ model: 'm', inputs: input }))).code).toBe(ErrorCode.Unavailable);
    } finally {
      await t.close();
    }
  });

  it('reads an OK without a message as DATA_LOSS, and an answer over maxMessageBytes as INVALID_ARGUMENT', async () => {
    const t = transport({ maxMessageBytes: 64 });
    try {
      behaviour = (stream) => ok(stream);
      expect((await failure(t.infer({ model: 'm', inputs: input }))).code).toBe(ErrorCode.DataLoss);
      behaviour = (stream) => ok(stream, answer(new Uint8Array(100)));
      const tooLarge = await failure(t.infer({ model: 'm', inputs: input }));
      expect(tooLarge.code).toBe(ErrorCode.InvalidArgument);
      expect(tooLarge.message).toContain('maxMessageBytes');
    } finally {
      await t.close();
    }
  });

  it('ends a call past its deadline with DEADLINE_EXCEEDED and resets the stream', async () => {
    behaviour = () => {};
    const t = transport();
    const before = closedStreams;
    try {
      const error = await failure(t.infer({ model: 'm', inputs: input }, { timeoutMs: 50 }));
      expect(error.code).toBe(ErrorCode.DeadlineExceeded);
      await expect.poll(() => closedStreams, { timeout: 10_000 }).toBeGreaterThan(before);
    } finally {
      await t.close();
    }
  });

  it('cancels on abort (CANCELLED), and the server sees the stream closed', async () => {
    behaviour = () => {};
    const t = transport();
    const before = closedStreams;
    try {
      const controller = new AbortController();
      const call = t.infer({ model: 'm', inputs: input }, { signal: controller.signal });
      await expect.poll(() => lastBody.byteLength, { timeout: 10_000 }).toBeGreaterThan(0);
      controller.abort();
      expect((await failure(call)).code).toBe(ErrorCode.Cancelled);
      await expect.poll(() => closedStreams, { timeout: 10_000 }).toBeGreaterThan(before);
    } finally {
      await t.close();
    }
  });

  it('ends a call aborted while its request is being compressed, without waiting on the server', async () => {
    behaviour = () => {};
    const t = createGrpcTransport({ url, engine: 'http2', enableGpuIpc: false, compression: 'gzip' });
    try {
      const controller = new AbortController();
      const call = t.infer({ model: 'm', inputs: input }, { signal: controller.signal });
      controller.abort();
      expect((await failure(call)).code).toBe(ErrorCode.Cancelled);
    } finally {
      await t.close();
    }
  });

  it('streams several responses of one request until the final-response flag', async () => {
    const streamed = (raw: number[] | undefined) =>
      toBinary(
        ModelStreamInferResponseSchema,
        create(ModelStreamInferResponseSchema, {
          inferResponse:
            raw === undefined
              ? create(ModelInferResponseSchema, {
                  modelName: 'm',
                  parameters: {
                    triton_final_response: { parameterChoice: { case: 'boolParam', value: true } },
                  },
                })
              : fromBinary(ModelInferResponseSchema, answer(new Uint8Array(raw))),
        }),
      );
    behaviour = (stream) => ok(stream, streamed([1]), streamed([2]), streamed(undefined));
    const t = transport();
    try {
      const seen: number[][] = [];
      for await (const response of t.stream({ model: 'm', inputs: input }))
        seen.push(Array.from(response.outputs[0]?.raw ?? []));
      expect(seen).toEqual([[1], [2]]);
      expect(lastHeaders[':path']).toBe('/inference.GRPCInferenceService/ModelStreamInfer');
      const sent = fromBinary(ModelInferRequestSchema, lastBody.subarray(5));
      expect(sent.parameters.triton_enable_empty_final_response?.parameterChoice.value).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('reports a refused connection as UNAVAILABLE', async () => {
    const t = createGrpcTransport({
      url: '127.0.0.1:1',
      engine: 'http2',
      enableGpuIpc: false,
      timeoutMs: 5000,
    });
    try {
      const error = await failure(t.infer({ model: 'm', inputs: input }));
      expect(error.code).toBe(ErrorCode.Unavailable);
      expect(error.message).toContain('ECONNREFUSED');
    } finally {
      await t.close();
    }
  });
});
