// The http2 engine's connections (packages/core/src/h2/h2-connection.ts, h2-engine.ts): their
// connectivity, on the reference server and on bare node:http2 servers, and as a router watches it.
import { createServer } from 'node:http2';
import type { Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  type ConnectivityChange,
  createGrpcTransport,
  ErrorCode,
  InfergateError,
  InferResult,
} from '@infergate/core';
import { ModelInferResponseSchema } from '@infergate/core/proto';
import { createRouter, type InferRouter } from '@infergate/router';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answerOk,
  cleanups,
  closeAll,
  deadUrl,
  h2Client,
  identity,
  listenBare,
  referenceServer,
  unary,
  watch,
} from './http2-engine-test-servers.js';

afterEach(closeAll);

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
    // Node's server keeps a session it sent GOAWAY on open until destroyed: listenBare's cleanup does.
    const { url } = await listenBare(server);
    const transport = createGrpcTransport({
      url,
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

  it('says the calls were lost when the connection closes under a call, before the call has failed', async () => {
    // A server that takes calls and never answers; its connection is then cut from its side, with
    // no GOAWAY (as when its process dies: destroying the session would send one).
    const server = createServer();
    const sockets = new Set<Socket>();
    let streams = 0;
    server.on('connection', (socket: Socket) => sockets.add(socket));
    server.on('stream', (stream) => {
      streams++;
      stream.resume();
    });
    const { url } = await listenBare(server);
    const transport = createGrpcTransport({
      url,
      engine: 'http2',
      enableGpuIpc: false,
    });
    cleanups.push(() => transport.close());
    const order: string[] = [];
    const changes: ConnectivityChange[] = [];
    transport.watchConnectivity((change) => {
      changes.push(change);
      if (change.callsLost === true) order.push('calls lost');
    });
    const call = transport.infer({ model: 'm', inputs: unary.inputs }).then(
      () => undefined,
      (error: unknown) => {
        order.push('call failed');
        return error;
      },
    );
    await expect.poll(() => streams).toBe(1);
    for (const socket of sockets) socket.destroy();
    const error = await call;
    expect((error as InfergateError).code).toBe(ErrorCode.Unavailable);
    expect(changes.at(-1)).toEqual({ from: 'ready', to: 'idle', callsLost: true });
    expect(order).toEqual(['calls lost', 'call failed']);
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
