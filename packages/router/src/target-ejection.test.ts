import {
  buildInferRequest,
  createTritonClient,
  InferResult,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import {
  createFaultProxy,
  type FaultProxy,
  type ProxyFault,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { recordUnhandledRejections } from '../../../test/unit/unhandled-rejections.js';
import type { BreakerEjection } from './breaker.js';
import type { RouterConfig } from './config.js';
import { createRouter, type InferRouter } from './infer-router.js';
import type { AttemptEvent } from './router-events.js';

// Connectivity-driven ejection (target-ejection.ts) against real reference servers, with a TCP
// fault proxy in front of the primary. The consecutive-gateway-failure trip is off in these tests
// (consecutiveGatewayFailures: 0), so only the channel's connectivity can eject a target.
const channelOptions = { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 };
const servers: TestServer[] = [];
const proxies: FaultProxy[] = [];
const clients: TritonClient[] = [];
const routers: InferRouter[] = [];

const unhandled = recordUnhandledRejections();

afterEach(async () => {
  for (const created of routers.splice(0)) await created.close();
  for (const client of clients.splice(0)) await client.close();
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const started of servers.splice(0)) await started.stop();
  expect(unhandled).toEqual([]);
});

const identity = (value: number) =>
  buildInferRequest('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [value] }]);

interface Setup {
  primary: TestServer;
  proxy: FaultProxy;
  /** The primary's client, through the proxy. */
  client: TritonClient;
  router: InferRouter;
  attempts: AttemptEvent[];
  ejections: BreakerEjection[];
}

/**
 * Router a → b; a through a fault proxy. `layered`: a's transport is a plain layer over the channel
 * (no hook of its own), and the channel is named in the target's `connectivity`.
 */
async function setup(layered = false): Promise<Setup> {
  const [primary, fallback] = await Promise.all([
    startTestServer({ stopGraceMs: 100 }),
    startTestServer({ stopGraceMs: 100 }),
  ]);
  servers.push(primary, fallback);
  const proxy = await createFaultProxy({ target: primary.url });
  proxies.push(proxy);
  const client = createTritonClient({ url: proxy.url, enableGpuIpc: false, channelOptions });
  const fallbackClient = createTritonClient({ url: fallback.url, enableGpuIpc: false, channelOptions });
  clients.push(client, fallbackClient);
  const layer: InferTransport = {
    infer: (request, options) => client.grpc.infer(request, options),
    stream: (request, options) => client.grpc.stream(request, options),
  };
  const config: RouterConfig = {
    targets: [
      layered
        ? { name: 'a', transport: layer, connectivity: client.grpc }
        : { name: 'a', transport: client.grpc },
      { name: 'b', transport: fallbackClient.grpc },
    ],
    breaker: { consecutiveGatewayFailures: 0, openMs: 60_000, maxOpenMs: 60_000 },
  };
  const router = createRouter(config);
  routers.push(router);
  const attempts: AttemptEvent[] = [];
  const ejections: BreakerEjection[] = [];
  router.on('attempt', (event) => attempts.push(event));
  router.breaker('a').on('eject', (ejection) => ejections.push(ejection));
  // Connect a: one call through the router (it goes to a, the first of the chain).
  const response = await router.infer(identity(7));
  expect(new InferResult(response).output('OUTPUT0').data[0]).toBe(7);
  expect(attempts.map((event) => `${event.target}:${event.outcome}`)).toEqual(['a:success']);
  attempts.length = 0;
  return { primary, proxy, client, router, attempts, ejections };
}

async function callsGoToB(router: InferRouter, attempts: AttemptEvent[]): Promise<void> {
  const values = Array.from({ length: 20 }, (_, index) => index);
  const responses = await Promise.all(values.map((value) => router.infer(identity(value))));
  responses.forEach((response, index) => {
    expect(new InferResult(response).output('OUTPUT0').data[0]).toBe(values[index]);
  });
  // Not one attempt on a: it was out of rotation before these calls were made.
  expect(attempts.filter((event) => event.target === 'a')).toEqual([]);
}

describe('connectivity-driven ejection', () => {
  const faults: { name: string; fault: ProxyFault }[] = [
    { name: 'refused (the process died)', fault: { kind: 'refuse' } },
    { name: 'reset on every connect', fault: { kind: 'reset' } },
  ];
  for (const { name, fault } of faults) {
    it(`takes a target out of rotation when its connection is lost and the redial is ${name}, before any call fails there`, async () => {
      const { proxy, router, attempts, ejections } = await setup();
      await proxy.set(fault);
      // No call is sent: the channel's lost connection, redialled and refused, is the only signal.
      await expect.poll(() => router.breakerStates().a?.kind, { timeout: 10_000 }).toBe('open');
      expect(ejections).toHaveLength(1);
      expect(ejections[0]?.reason).toContain('TRANSIENT_FAILURE');
      expect(attempts).toEqual([]);
      await callsGoToB(router, attempts);
    });
  }

  it('sends new calls elsewhere from the lost connection on, before the redial answers, and back once it is ready', async () => {
    const { proxy, client, router, attempts, ejections } = await setup();
    // The connection is reset and the redial is accepted but never answered: the channel stays
    // `connecting`, so only the lost connection says anything (no refusal, no failed call).
    await proxy.set({ kind: 'reset' });
    await proxy.set({ kind: 'blackhole' });
    await expect.poll(() => client.grpc.connectivityState(), { timeout: 10_000 }).toBe('connecting');
    const values = [1, 2, 3, 4, 5];
    const responses = await Promise.all(
      values.map((value) => router.infer(identity(value), { timeoutMs: 5_000 })),
    );
    responses.forEach((response, index) => {
      expect(new InferResult(response).output('OUTPUT0').data[0]).toBe(values[index]);
    });
    expect(attempts.map((event) => `${event.target}:${event.outcome}`)).toEqual(
      values.map(() => 'b:success'),
    );
    // Not ejected: a healthy endpoint that only rotated its connection must stay in rotation.
    expect(ejections).toEqual([]);
    expect(router.breakerStates().a?.kind).toBe('closed');
    attempts.length = 0;
    await proxy.set({ kind: 'pass' });
    await expect.poll(() => client.grpc.connectivityState(), { timeout: 10_000 }).toBe('ready');
    const back = await router.infer(identity(9), { timeoutMs: 5_000 });
    expect(new InferResult(back).output('OUTPUT0').data[0]).toBe(9);
    expect(attempts.map((event) => `${event.target}:${event.outcome}`)).toEqual(['a:success']);
  });

  it('watches the channel named in `connectivity` when the transport is a layer over it', async () => {
    const { proxy, router, attempts, ejections } = await setup(true);
    await proxy.set({ kind: 'refuse' });
    await expect.poll(() => router.breakerStates().a?.kind, { timeout: 10_000 }).toBe('open');
    expect(ejections).toHaveLength(1);
    await callsGoToB(router, attempts);
  });

  it('half-opens the target once its connection is ready again, and the next call closes it', async () => {
    const { proxy, client, router, attempts } = await setup();
    await proxy.set({ kind: 'refuse' });
    await expect.poll(() => router.breakerStates().a?.kind, { timeout: 10_000 }).toBe('open');
    await proxy.set({ kind: 'pass' });
    // Nothing is sent to an open target, so nothing dials it: a readiness probe would; here the
    // test dials the channel itself. The open time (60 s) has not run out: only `ready` can do it.
    await expect
      .poll(() => client.grpc.connectivityState(true), { timeout: 10_000, interval: 100 })
      .toBe('ready');
    await expect.poll(() => router.breakerStates().a?.kind).toBe('half-open');
    const response = await router.infer(identity(3));
    expect(new InferResult(response).output('OUTPUT0').data[0]).toBe(3);
    expect(attempts.map((event) => `${event.target}:${event.outcome}`)).toEqual(['a:success']);
    expect(router.breakerStates().a?.kind).toBe('closed');
  });

  it('stops watching when the router closes', async () => {
    const { proxy, router, ejections } = await setup();
    await router.close();
    await proxy.set({ kind: 'refuse' });
    // The channel still reports the refusal (the client is open); the closed router must not act.
    const { client } = { client: clients[0] as TritonClient };
    client.grpc.connectivityState(true);
    await expect
      .poll(() => client.grpc.connectivityState(true), { timeout: 10_000, interval: 50 })
      .toBe('transient-failure');
    expect(ejections).toEqual([]);
  });
});
