import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { createTritonClient, type InfergateError } from '@infergate/core';
import { ModelMetadataResponseSchema } from '@infergate/core/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A raw HTTP/2 server that answers ModelInfer as Triton answers a wrong shape: INVALID_ARGUMENT with
 * a grpc-message ending in a space, which Node's HTTP/2 client drops (grpc-js's own server does not
 * send such a header). ModelMetadata declares INPUT0 as [4].
 */
const SHAPE_ERROR = "unexpected shape for input 'INPUT0' for model 'fixed4'. Expected [4], got [2,2]. ";
let server: Http2Server;
let port: number;

function grpcFrame(bytes: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + bytes.byteLength);
  frame.writeUInt32BE(bytes.byteLength, 1);
  frame.set(bytes, 5);
  return frame;
}

function answer(stream: ServerHttp2Stream, path: string): void {
  if (path.endsWith('/ModelMetadata')) {
    const metadata = create(ModelMetadataResponseSchema, {
      name: 'fixed4',
      versions: ['1'],
      platform: 'test',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4n] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4n] }],
    });
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(grpcFrame(toBinary(ModelMetadataResponseSchema, metadata)));
    return;
  }
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '3', 'grpc-message': SHAPE_ERROR },
    { endStream: true },
  );
}

beforeAll(async () => {
  server = createServer();
  server.on('stream', (stream, headers) => {
    stream.on('data', () => {});
    stream.on('end', () => answer(stream, String(headers[':path'])));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("a shape error whose text Node's HTTP/2 layer drops", () => {
  it('arrives whole over the default engine, whose own HTTP/2 layer keeps the trailing space', async () => {
    const client = createTritonClient({ url: `127.0.0.1:${port}`, enableGpuIpc: false });
    try {
      const error = (await client
        .infer('fixed4', [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] }])
        .catch((e) => e)) as InfergateError;
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain(SHAPE_ERROR.trim());
      expect(error.details).not.toMatchObject({ tritonMessageLost: true });
    } finally {
      await client.close();
    }
  });

  it("is rebuilt from the model's metadata over grpc-js: input, shape sent, shape declared", async () => {
    const client = createTritonClient({ url: `127.0.0.1:${port}`, enableGpuIpc: false, engine: 'grpc-js' });
    try {
      const error = (await client
        .infer('fixed4', [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] }])
        .catch((e) => e)) as InfergateError;
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain("unexpected shape for input 'INPUT0' for model 'fixed4'");
      expect(error.rawMessage).toContain('sent [2,2]');
      expect(error.rawMessage).toContain("the model's metadata says [4]");
      expect(error.details).toMatchObject({
        input: 'INPUT0',
        sentShape: [2, 2],
        modelShape: [4],
        tritonMessageLost: true,
      });
    } finally {
      await client.close();
    }
  });
});
