import {
  type ConnectivityChange,
  createTritonClient,
  isConnectivitySource,
  type TritonClient,
} from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterEach, describe, expect, it } from 'vitest';

// The gRPC transport's connectivity hook (packages/core/src/connectivity.ts) against a real
// reference server: what a router watches to take a dead endpoint out of rotation.
const channelOptions = { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 };
const servers: TestServer[] = [];
const clients: TritonClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const server of servers.splice(0)) await server.stop();
});

async function setup(): Promise<{ server: TestServer; client: TritonClient; changes: ConnectivityChange[] }> {
  const server = await startTestServer({ stopGraceMs: 100 });
  servers.push(server);
  // The grpc-js channel's hook; the http2 engine's is tested in http2-engine-connectivity.test.ts.
  const client = createTritonClient({
    url: server.url,
    enableGpuIpc: false,
    engine: 'grpc-js',
    channelOptions,
  });
  clients.push(client);
  const changes: ConnectivityChange[] = [];
  client.grpc.watchConnectivity((change) => changes.push(change));
  return { server, client, changes };
}

describe('GrpcTransport connectivity (engine grpc-js)', () => {
  it('is a ConnectivitySource: idle before the first call, ready after it, each change reported in order', async () => {
    const { client, changes } = await setup();
    expect(isConnectivitySource(client.grpc)).toBe(true);
    expect(client.grpc.connectivityState()).toBe('idle');
    expect(await client.serverLive()).toBe(true);
    expect(client.grpc.connectivityState()).toBe('ready');
    await expect.poll(() => changes.at(-1)?.to).toBe('ready');
    expect(changes[0]).toEqual({ from: 'idle', to: 'connecting' });
    for (let i = 1; i < changes.length; i++) expect(changes[i]?.from).toBe(changes[i - 1]?.to);
  });

  it('reports a lost connection when the server dies, and transient-failure when a redial is refused', async () => {
    const { server, client, changes } = await setup();
    expect(await client.serverLive()).toBe(true);
    await expect.poll(() => changes.at(-1)?.to).toBe('ready');
    server.kill(); // drops every connection and stops listening, as a crash does
    await expect.poll(() => changes.some((change) => change.from === 'ready')).toBe(true);
    client.grpc.connectivityState(true); // redial: refused
    await expect
      .poll(() => changes.some((change) => change.to === 'transient-failure'), { timeout: 5_000 })
      .toBe(true);
    await server.restart();
    client.grpc.connectivityState(true);
    await expect.poll(() => client.grpc.connectivityState(true), { timeout: 5_000 }).toBe('ready');
  });

  it('stops reporting once unwatched, and reports shutdown when the transport closes', async () => {
    const { client, changes } = await setup();
    const late: ConnectivityChange[] = [];
    const unwatch = client.grpc.watchConnectivity((change) => late.push(change));
    unwatch();
    expect(await client.serverLive()).toBe(true);
    await expect.poll(() => changes.at(-1)?.to).toBe('ready');
    expect(late).toEqual([]);
    await client.close();
    await expect.poll(() => changes.at(-1)?.to).toBe('shutdown');
    expect(client.grpc.connectivityState()).toBe('shutdown');
  });
});
