// The http2 engine over several urls: pick_first and round_robin, a call moving on from a refused
// dial, and connectivity once endpoints fail.
import { ErrorCode, InfergateError } from '@infergate/core';
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
