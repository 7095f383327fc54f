import { createTritonClient, type TritonClient } from '@infergate/core';
import { createFaultProxy, type FaultProxy, startTestServer, type TestServer } from '@infergate/testing';
import { afterEach, describe, expect, it } from 'vitest';

// Each client's management calls (grpc-js) run on connections of its own, not on a connection
// grpc-js shares across every client of the same address in the process.
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rig(): Promise<{ server: TestServer; proxy: FaultProxy; connect: () => TritonClient }> {
  const server = await startTestServer();
  cleanups.push(() => server.stop());
  // The proxy counts the TCP connections the clients open to the server.
  const proxy = await createFaultProxy({ target: server.url });
  cleanups.push(() => proxy.close());
  const connect = () => {
    const client = createTritonClient({ url: proxy.url, enableGpuIpc: false });
    cleanups.push(() => client.close());
    return client;
  };
  return { server, proxy, connect };
}

describe('grpc-js connections per client', () => {
  it('gives two clients of one address a connection each, and closing one leaves the other working', async () => {
    const { proxy, connect } = await rig();
    const first = connect();
    const second = connect();
    expect(await first.serverLive()).toBe(true);
    expect(await second.serverLive()).toBe(true);
    expect(proxy.accepted).toBe(2);
    await first.close();
    expect(await second.serverLive()).toBe(true);
    expect(proxy.accepted).toBe(2);
  });

  it('shares one connection between clients that ask for the process-wide pool', async () => {
    const { proxy } = await rig();
    const shared = () => {
      const client = createTritonClient({
        url: proxy.url,
        enableGpuIpc: false,
        channelOptions: { 'grpc.use_local_subchannel_pool': 0 },
      });
      cleanups.push(() => client.close());
      return client;
    };
    const first = shared();
    const second = shared();
    expect(await first.serverLive()).toBe(true);
    expect(await second.serverLive()).toBe(true);
    expect(proxy.accepted).toBe(1);
  });
});
