import {
  createGrpcTransport,
  createTritonClient,
  InfergateError,
  type InferTransport,
} from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

const addSub = (a: number, b: number) => [
  { name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16).fill(a) },
  { name: 'INPUT1', datatype: 'FP32' as const, shape: [1, 16], data: new Float32Array(16).fill(b) },
];

describe('construction', () => {
  it('createGrpcTransport gives one endpoint as an InferTransport without a client', async () => {
    const grpc = createGrpcTransport({ url: server.url, enableGpuIpc: false });
    try {
      const client = createTritonClient({ transport: grpc });
      const result = await client.infer('add_sub', addSub(2, 1));
      expect(Array.from(result.output('OUTPUT0').data as Float32Array)).toEqual(new Array(16).fill(3));
    } finally {
      await grpc.close();
    }
  });

  it('rejects transport options without a url with INVALID_ARGUMENT', () => {
    expect(() => createGrpcTransport({} as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/url/) }),
    );
    expect(() => createTritonClient({})).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/url/) }),
    );
  });

  it('a client given only a transport infers through it and refuses management calls', async () => {
    const grpc = createGrpcTransport({ url: server.url, enableGpuIpc: false });
    let closes = 0;
    const handed: InferTransport = {
      infer: (request, options) => grpc.infer(request, options),
      stream: (request, options) => grpc.stream(request, options),
      close: () => {
        closes++;
      },
    };
    const client = createTritonClient({ transport: handed });
    try {
      expect(client.hasEndpoint).toBe(false);
      await expect(client.infer('add_sub', addSub(5, 2))).resolves.toBeDefined();
      const error = await client.serverLive().catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(InfergateError);
      expect((error as InfergateError).code).toBe('FAILED_PRECONDITION');
    } finally {
      await client.close();
      await grpc.close();
    }
    // Nothing closes what it was handed: the creator of `handed` closes it.
    expect(closes).toBe(0);
  });
});
