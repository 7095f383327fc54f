import { ErrorCode, type InfergateError } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { answeredBy, bareServer, closeAll, deadUrl, h2Client, watch } from './http2-engine-test-servers.js';

afterEach(closeAll);

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
    // The first call to the dead endpoint fails; once it is in transient-failure, calls skip it.
    const outcomes: string[] = [];
    for (let i = 0; i < 2; i++)
      outcomes.push(await answeredBy(client.grpc).then(String, (error: InfergateError) => error.code));
    expect(outcomes.sort()).toEqual(['1', ErrorCode.Unavailable].sort());
    for (let i = 0; i < 10; i++) expect(await answeredBy(client.grpc)).toBe(1);
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
    // At most the call that redials the dead endpoint fails there; then the second one answers.
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++)
      outcomes.push(await answeredBy(client.grpc).then(String, (error: InfergateError) => error.code));
    expect(outcomes.filter((outcome) => outcome !== ErrorCode.Unavailable).length).toBeGreaterThanOrEqual(3);
    expect(outcomes.slice(-3)).toEqual(['2', '2', '2']);
    expect(client.grpc.connectivityState()).toBe('ready');
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
