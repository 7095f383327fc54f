// Servers and clients for the http2 engine's connection tests: the reference server, bare node:http2
// servers that answer with their own id, a url nothing listens on, and a client on the http2 engine.
import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  buildInferRequest,
  type ConnectivityChange,
  createTritonClient,
  type GrpcTransport,
  type TritonClient,
} from '@infergate/core';
import { ModelInferResponseSchema } from '@infergate/core/proto';
import { startTestServer, type TestServer } from '@infergate/testing';

export const backoff = { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 };
/** What each test leaves open (servers, clients), closed by `closeAll` after it. */
export const cleanups: (() => Promise<void> | void)[] = [];

export async function closeAll(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function referenceServer(
  options: Parameters<typeof startTestServer>[0] = {},
): Promise<TestServer> {
  const server = await startTestServer({ stopGraceMs: 100, ...options });
  cleanups.push(() => server.stop());
  return server;
}

export function h2Client(
  url: string | string[],
  extra: Parameters<typeof createTritonClient>[0] = {},
): TritonClient {
  const client = createTritonClient({
    url,
    engine: 'http2',
    enableGpuIpc: false,
    timeoutMs: 10_000,
    channelOptions: backoff,
    ...extra,
  });
  cleanups.push(() => client.close());
  return client;
}

export function watch(transport: GrpcTransport): ConnectivityChange[] {
  const changes: ConnectivityChange[] = [];
  transport.watchConnectivity((change) => changes.push(change));
  return changes;
}

export const identity = (value: number) =>
  buildInferRequest('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [value] }]);

/** A bare node:http2 server answering every ModelInfer with its own `id` as a UINT8 output. */
export interface BareServer {
  id: number;
  url: string;
  calls: number;
  /** Stops listening and drops every connection (as a crash does). */
  kill(): Promise<void>;
}

/** Answers a gRPC call on a bare node:http2 server: one framed message, then status 0 in trailers. */
export function answerOk(stream: ServerHttp2Stream, message: Uint8Array): void {
  const framed = Buffer.alloc(5 + message.byteLength);
  framed.writeUInt32BE(message.byteLength, 1);
  framed.set(message, 5);
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(framed);
}

/**
 * Starts a bare node:http2 server on a free port of 127.0.0.1 and returns its url and a `kill` that
 * stops listening and destroys every open session (Node keeps a session open until destroyed, even
 * after GOAWAY). The test's cleanup kills it if the test did not.
 */
export async function listenBare(server: Http2Server): Promise<{ url: string; kill(): Promise<void> }> {
  const sessions = new Set<Http2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  const kill = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const session of sessions) session.destroy();
    await closed;
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => (server.listening ? kill() : undefined));
  return { url: `127.0.0.1:${(server.address() as AddressInfo).port}`, kill };
}

export async function bareServer(id: number): Promise<BareServer> {
  const server: Http2Server = createServer();
  const bare: BareServer = { id, url: '', calls: 0, kill: async () => {} };
  server.on('stream', (stream: ServerHttp2Stream) => {
    stream.resume();
    stream.on('end', () => {
      bare.calls++;
      const message = toBinary(
        ModelInferResponseSchema,
        create(ModelInferResponseSchema, {
          modelName: 'm',
          outputs: [{ name: 'OUT', datatype: 'UINT8', shape: [1n] }],
          rawOutputContents: [new Uint8Array([id])],
        }),
      );
      answerOk(stream, message);
    });
  });
  const listening = await listenBare(server);
  bare.url = listening.url;
  bare.kill = listening.kill;
  return bare;
}

/** A free port nothing listens on (connections to it are refused). */
export async function deadUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

export const unary = {
  model: 'm',
  inputs: [{ name: 'IN', datatype: 'UINT8' as const, shape: [1], raw: new Uint8Array([1]) }],
};

export async function answeredBy(transport: GrpcTransport): Promise<number> {
  const response = await transport.infer(unary);
  return response.outputs[0]?.raw?.[0] ?? -1;
}
