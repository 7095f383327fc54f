// The http2 engine's connections (packages/core/src/h2/h2-connection.ts, h2-engine.ts): their
// connectivity, as a router watches it, on the reference server and on bare node:http2 servers;
// pick_first and round_robin over several urls; which channelOptions it honours; TLS, mutual TLS
// and keepalive.
import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  buildInferRequest,
  type ConnectivityChange,
  createGrpcTransport,
  createTritonClient,
  ErrorCode,
  type GrpcTransport,
  InfergateError,
  InferResult,
  type TritonClient,
} from '@infergate/core';
import { ModelInferResponseSchema } from '@infergate/core/proto';
import { createRouter, type InferRouter } from '@infergate/router';
import {
  generateTestCertificates,
  startTestServer,
  type TestCertificates,
  type TestServer,
} from '@infergate/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const backoff = { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 };
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function referenceServer(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer({ stopGraceMs: 100, ...options });
  cleanups.push(() => server.stop());
  return server;
}

function h2Client(
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

function watch(transport: GrpcTransport): ConnectivityChange[] {
  const changes: ConnectivityChange[] = [];
  transport.watchConnectivity((change) => changes.push(change));
  return changes;
}

const identity = (value: number) =>
  buildInferRequest('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [value] }]);

/** A bare node:http2 server answering every ModelInfer with its own `id` as a UINT8 output. */
interface BareServer {
  id: number;
  url: string;
  calls: number;
  /** Stops listening and drops every connection (as a crash does). */
  kill(): Promise<void>;
}

/** Answers a gRPC call on a bare node:http2 server: one framed message, then status 0 in trailers. */
function answerOk(stream: ServerHttp2Stream, message: Uint8Array): void {
  const framed = Buffer.alloc(5 + message.byteLength);
  framed.writeUInt32BE(message.byteLength, 1);
  framed.set(message, 5);
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(framed);
}

async function bareServer(id: number): Promise<BareServer> {
  const server: Http2Server = createServer();
  const sessions = new Set<Http2Session>();
  const bare: BareServer = {
    id,
    url: '',
    calls: 0,
    kill: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      await closed;
    },
  };
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bare.url = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => (server.listening ? bare.kill() : undefined));
  return bare;
}

/** A free port nothing listens on (connections to it are refused). */
async function deadUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

const unary = {
  model: 'm',
  inputs: [{ name: 'IN', datatype: 'UINT8' as const, shape: [1], raw: new Uint8Array([1]) }],
};

async function answeredBy(transport: GrpcTransport): Promise<number> {
  const response = await transport.infer(unary);
  return response.outputs[0]?.raw?.[0] ?? -1;
}

describe('http2 engine connectivity', () => {
  it('follows the http2 connection that carries inference, not the grpc-js channel', async () => {
    const server = await referenceServer();
    const client = h2Client(server.url);
    const changes = watch(client.grpc);
    expect(client.grpc.engine).toBe('http2');
    expect(client.grpc.connectivityState()).toBe('idle');
    expect(new InferResult(await client.grpc.infer(identity(3))).output('OUTPUT0').data[0]).toBe(3);
    // Only inference ran: the grpc-js channel was never used, yet the transport is ready.
    expect(client.grpc.connectivityState()).toBe('ready');
    expect(changes).toEqual([
      { from: 'idle', to: 'connecting' },
      { from: 'connecting', to: 'ready' },
    ]);
  });

  it('reports the lost connection when the server dies, transient-failure when the redial is refused, and ready again after a restart', async () => {
    const server = await referenceServer();
    const client = h2Client(server.url);
    const changes = watch(client.grpc);
    await client.grpc.infer(identity(1));
    server.kill();
    await expect.poll(() => changes.at(-1)).toEqual({ from: 'ready', to: 'idle' });
    expect(client.grpc.connectivityState(true)).toBe('connecting'); // redial
    await expect.poll(() => client.grpc.connectivityState()).toBe('transient-failure');
    await server.listen();
    // The engine redials by itself after its backoff (50–200 ms here), as grpc-js does.
    await expect.poll(() => client.grpc.connectivityState()).toBe('ready');
    for (let i = 1; i < changes.length; i++) expect(changes[i]?.from).toBe(changes[i - 1]?.to);
    expect(new InferResult(await client.grpc.infer(identity(2))).output('OUTPUT0').data[0]).toBe(2);
  });

  it('fails a call to a refused endpoint with UNAVAILABLE and reports transient-failure', async () => {
    const client = h2Client(await deadUrl());
    const changes = watch(client.grpc);
    const error = await client.grpc.infer(identity(1)).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
    await expect.poll(() => changes.some((change) => change.to === 'transient-failure')).toBe(true);
    expect(changes[0]).toEqual({ from: 'idle', to: 'connecting' });
  });

  it('reports idle after GOAWAY from a server that is still up, and the next call reconnects', async () => {
    const server = createServer();
    let sessions = 0;
    server.on('session', (session) => {
      sessions++;
      // The first connection is rotated away (as on a maximum connection age) after its first call.
      if (sessions === 1) session.once('stream', () => setImmediate(() => session.goaway()));
    });
    server.on('stream', (stream) => {
      stream.resume();
      stream.on('end', () => {
        const message = toBinary(
          ModelInferResponseSchema,
          create(ModelInferResponseSchema, { modelName: 'm' }),
        );
        answerOk(stream, message);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // Node's server keeps a session it sent GOAWAY on open until destroyed.
    const open = new Set<Http2Session>();
    server.on('session', (session) => {
      open.add(session);
      session.on('close', () => open.delete(session));
    });
    cleanups.push(async () => {
      for (const session of open) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const transport = createGrpcTransport({
      url: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      engine: 'http2',
      enableGpuIpc: false,
    });
    cleanups.push(() => transport.close());
    const changes = watch(transport);
    await transport.infer({ model: 'm', inputs: unary.inputs });
    await expect.poll(() => changes.at(-1)).toEqual({ from: 'ready', to: 'idle' });
    await transport.infer({ model: 'm', inputs: unary.inputs });
    expect(sessions).toBe(2);
    expect(transport.connectivityState()).toBe('ready');
  });

  it('reports shutdown when the transport closes, and not to a listener that unwatched', async () => {
    const server = await referenceServer();
    const client = h2Client(server.url);
    const changes = watch(client.grpc);
    const late: ConnectivityChange[] = [];
    client.grpc.watchConnectivity((change) => late.push(change))();
    await client.grpc.infer(identity(1));
    await client.close();
    expect(changes.at(-1)).toEqual({ from: 'ready', to: 'shutdown' });
    expect(client.grpc.connectivityState()).toBe('shutdown');
    expect(late).toEqual([]);
  });
});

describe('a router over the http2 engine', () => {
  let routers: InferRouter[] = [];
  afterEach(async () => {
    for (const router of routers) await router.close();
    routers = [];
  });

  it('ejects a target the moment its server dies, before any call fails there, and readmits it once it is back', async () => {
    const [primary, fallback] = await Promise.all([referenceServer(), referenceServer()]);
    const a = h2Client(primary.url);
    const b = h2Client(fallback.url);
    const router = createRouter({
      targets: [
        { name: 'a', transport: a.grpc },
        { name: 'b', transport: b.grpc },
      ],
      // Only connectivity can eject here: the failure-count trip is off.
      breaker: { consecutiveGatewayFailures: 0, openMs: 60_000, maxOpenMs: 60_000 },
    });
    routers.push(router);
    const attempts: string[] = [];
    router.on('attempt', (event) => attempts.push(`${event.target}:${event.outcome}`));
    const reasons: string[] = [];
    router.breaker('a').on('eject', (ejection) => reasons.push(ejection.reason));
    await router.infer(identity(1));
    expect(attempts).toEqual(['a:success']);
    attempts.length = 0;

    primary.kill();
    // No call is sent: the closed http2 session, redialled and refused, is the only signal.
    await expect.poll(() => router.breakerStates().a?.kind).toBe('open');
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain('TRANSIENT_FAILURE');
    expect(attempts).toEqual([]);
    const values = await Promise.all(
      [10, 11, 12].map(
        async (value) => new InferResult(await router.infer(identity(value))).output('OUTPUT0').data[0],
      ),
    );
    expect(values).toEqual([10, 11, 12]);
    expect(attempts).toEqual(['b:success', 'b:success', 'b:success']);

    await primary.listen();
    // The engine's own redial finds it ready: the breaker half-opens without waiting out openMs.
    await expect.poll(() => router.breakerStates().a?.kind).not.toBe('open');
  });
});

describe('several urls', () => {
  it('round_robin spreads calls over every endpoint', async () => {
    const servers = await Promise.all([bareServer(1), bareServer(2)]);
    const client = h2Client(servers.map((server) => server.url));
    const seen = new Set<number>();
    for (let i = 0; i < 6; i++) seen.add(await answeredBy(client.grpc));
    expect([...seen].sort()).toEqual([1, 2]);
    expect(servers.map((server) => server.calls)).toEqual([3, 3]);
  });

  it('round_robin stops sending to an endpoint whose connection failed, and stays ready over the others', async () => {
    const live = await bareServer(1);
    const client = h2Client([await deadUrl(), live.url]);
    const changes = watch(client.grpc);
    // The call that dials the dead endpoint is refused before anything is sent and moves to the live
    // one; once the dead one is in transient-failure, calls skip it. No call fails.
    for (let i = 0; i < 12; i++) expect(await answeredBy(client.grpc)).toBe(1);
    expect(live.calls).toBe(12);
    expect(client.grpc.connectivityState()).toBe('ready');
    expect(changes.some((change) => change.to === 'transient-failure')).toBe(false);
  });

  it('pick_first sends every call to the first endpoint until it fails, then to the next', async () => {
    const servers = await Promise.all([bareServer(1), bareServer(2)]);
    const client = h2Client(
      servers.map((server) => server.url),
      { loadBalancing: 'pick_first' },
    );
    for (let i = 0; i < 5; i++) expect(await answeredBy(client.grpc)).toBe(1);
    expect(servers[1]?.calls).toBe(0);
    await servers[0]?.kill();
    await expect.poll(() => client.grpc.connectivityState()).not.toBe('ready');
    // The call that redials the dead endpoint is refused there before anything is sent, so it
    // moves on to the second endpoint instead of failing: no call is lost.
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++)
      outcomes.push(await answeredBy(client.grpc).then(String, (error: InfergateError) => error.code));
    expect(outcomes).toEqual(['2', '2', '2', '2']);
    expect(servers[1]?.calls).toBe(4);
    expect(client.grpc.connectivityState()).toBe('ready');
  });

  it('moves calls waiting on a refused dial to another endpoint, and fails them only when every endpoint is refused', async () => {
    const live = await bareServer(2);
    const client = h2Client([await deadUrl(), live.url], { loadBalancing: 'pick_first' });
    // Every call is sent to the first endpoint's dial; all of them move to the second when it is refused.
    const answers = await Promise.all(Array.from({ length: 8 }, () => answeredBy(client.grpc)));
    expect(answers).toEqual(Array(8).fill(2));
    expect(live.calls).toBe(8);
    const dead = h2Client([await deadUrl(), await deadUrl()], { loadBalancing: 'pick_first' });
    const error = await answeredBy(dead.grpc).then(
      () => undefined,
      (failure: InfergateError) => failure,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect(error?.code).toBe(ErrorCode.Unavailable);
  });

  it('reports transient-failure only once every endpoint is refused', async () => {
    const client = h2Client([await deadUrl(), await deadUrl()]);
    const changes = watch(client.grpc);
    expect(client.grpc.connectivityState(true)).toBe('connecting'); // dials both
    await expect.poll(() => changes.at(-1)?.to).toBe('transient-failure');
    // One endpoint refused while the other still dials is not a failure of the whole transport.
    expect(changes.slice(0, 2)).toEqual([
      { from: 'idle', to: 'connecting' },
      { from: 'connecting', to: 'transient-failure' },
    ]);
  });
});

describe('channelOptions with the http2 engine', () => {
  it('honours the reconnect backoff and keepalive keys, and refuses any other key with INVALID_ARGUMENT naming it', () => {
    const honoured = createGrpcTransport({
      url: '127.0.0.1:1',
      engine: 'http2',
      channelOptions: {
        ...backoff,
        'grpc.keepalive_time_ms': 1000,
        'grpc.keepalive_permit_without_calls': 1,
      },
    });
    expect(honoured.engine).toBe('http2');
    void honoured.close();
    let error: unknown;
    try {
      createGrpcTransport({
        url: '127.0.0.1:1',
        engine: 'http2',
        channelOptions: { 'grpc.enable_channelz': 0, 'grpc.max_reconnect_backoff_ms': 100 },
      });
    } catch (failure) {
      error = failure;
    }
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.InvalidArgument);
    expect((error as InfergateError).message).toContain("'grpc.enable_channelz'");
    expect((error as InfergateError).message).not.toContain('max_reconnect');
    expect(() =>
      createGrpcTransport({
        url: '127.0.0.1:1',
        engine: 'http2',
        channelOptions: { 'grpc.keepalive_time_ms': 'soon' },
      }),
    ).toThrow(/grpc\.keepalive_time_ms/);
  });

  it('is the default engine, and grpc-js carries inference instead when channelOptions hold a key it does not honour', async () => {
    const plain = createGrpcTransport({ url: '127.0.0.1:1' });
    const tuned = createGrpcTransport({ url: '127.0.0.1:1', channelOptions: backoff });
    const foreign = createGrpcTransport({ url: '127.0.0.1:1', channelOptions: { 'grpc.enable_retries': 0 } });
    expect([plain.engine, tuned.engine, foreign.engine]).toEqual(['http2', 'http2', 'grpc-js']);
    await Promise.all([plain.close(), tuned.close(), foreign.close()]);
  });

  it('keeps grpc-js when asked for it, whatever channelOptions hold', async () => {
    const transport = createGrpcTransport({
      url: '127.0.0.1:1',
      engine: 'grpc-js',
      channelOptions: { 'grpc.enable_channelz': 0 },
    });
    expect(transport.engine).toBe('grpc-js');
    await transport.close();
  });
});

describe('TLS and keepalive on the http2 engine', () => {
  let certs: TestCertificates;
  beforeAll(() => {
    certs = generateTestCertificates();
  });

  it('infers over TLS with the given CA, checks the name given as serverName, and refuses an untrusted server', async () => {
    const server = await referenceServer({ tls: { key: certs.serverKey, cert: certs.serverCert } });
    const client = h2Client(`grpcs://${server.url}`, { tls: { ca: certs.ca } });
    expect(new InferResult(await client.grpc.infer(identity(5))).output('OUTPUT0').data[0]).toBe(5);
    expect(client.grpc.connectivityState()).toBe('ready');
    const named = h2Client(`grpcs://${server.url}`, { tls: { ca: certs.ca, serverName: 'localhost' } });
    expect(new InferResult(await named.grpc.infer(identity(6))).output('OUTPUT0').data[0]).toBe(6);
    const wrongName = h2Client(`grpcs://${server.url}`, {
      tls: { ca: certs.ca, serverName: 'elsewhere.test' },
    });
    const untrusted = h2Client(`grpcs://${server.url}`); // system roots only
    for (const refused of [wrongName, untrusted]) {
      const error = await refused.grpc.infer(identity(1)).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
      await expect.poll(() => refused.grpc.connectivityState()).toBe('transient-failure');
    }
  });

  it('presents the client certificate for mutual TLS; without it the server refuses', async () => {
    const server = await referenceServer({
      tls: { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requireClientCert: true },
    });
    const good = h2Client(`grpcs://${server.url}`, {
      tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey },
    });
    expect(new InferResult(await good.grpc.infer(identity(8))).output('OUTPUT0').data[0]).toBe(8);
    const anonymous = h2Client(`grpcs://${server.url}`, { tls: { ca: certs.ca } });
    const error = await anonymous.grpc.infer(identity(1)).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
    expect(server.calls.filter((call) => call.method === 'ModelInfer')).toHaveLength(1);
  });

  it('sends keepalive pings while idle when permitWithoutCalls is on', async () => {
    const server = createServer();
    let pings = 0;
    server.on('session', (session) => session.on('ping', () => pings++));
    server.on('stream', (stream) =>
      stream.respond({ ':status': 200, 'grpc-status': '12' }, { endStream: true }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const transport = createGrpcTransport({
      url: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      engine: 'http2',
      enableGpuIpc: false,
      keepalive: { timeMs: 50, timeoutMs: 5000, permitWithoutCalls: true },
    });
    cleanups.push(() => transport.close());
    transport.connectivityState(true);
    await expect.poll(() => pings).toBeGreaterThanOrEqual(2);
    expect(transport.connectivityState()).toBe('ready');
  });

  it('closes a connection whose keepalive ping is not answered, and reports it lost', async () => {
    // Speaks just enough HTTP/2 to be ready (its SETTINGS frame), then never answers anything.
    const sockets = new Set<Socket>();
    let closedByClient = 0;
    const silent: Server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => {});
      socket.on('close', () => {
        closedByClient++;
        sockets.delete(socket);
      });
      socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const transport = createGrpcTransport({
      url: `127.0.0.1:${(silent.address() as AddressInfo).port}`,
      engine: 'http2',
      enableGpuIpc: false,
      keepalive: { timeMs: 50, timeoutMs: 100, permitWithoutCalls: true },
    });
    cleanups.push(() => transport.close());
    const changes = watch(transport);
    transport.connectivityState(true);
    await expect.poll(() => changes).toContainEqual({ from: 'connecting', to: 'ready' });
    await expect.poll(() => changes).toContainEqual({ from: 'ready', to: 'idle' });
    await expect.poll(() => closedByClient).toBeGreaterThanOrEqual(1);
  });
});
