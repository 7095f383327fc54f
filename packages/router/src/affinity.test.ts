import { buildInferRequest, ErrorCode, type InferRequest } from '@infergate/core';
import { describe, expect, it, vi } from 'vitest';
import { type FakeTarget, fakeTarget, routersPerTest } from '../../../test/unit/router-fakes.js';
import { affinityOrder } from './affinity.js';
import type { RouterOptions } from './config.js';
import type { InferRouter } from './infer-router.js';
import { LoadBook } from './load-stats.js';

const request = buildInferRequest('m', [
  { name: 'IN', datatype: 'FP32', shape: [1], data: new Float32Array([1]) },
]);

const target = (name: string): FakeTarget => fakeTarget(name);

const { router } = routersPerTest();

function three(extra: Partial<RouterOptions> = {}): {
  routed: InferRouter;
  targets: Record<string, FakeTarget>;
} {
  const targets = { a: target('a'), b: target('b'), c: target('c') };
  const routed = router({
    targets: Object.entries(targets).map(([name, transport]) => ({ name, transport })),
    affinity: { key: (_request, options) => options.tenant },
    retry: { maxRetries: 0 },
    ...extra,
  });
  return { routed, targets };
}

describe('affinity', () => {
  it('keeps every call of a key on one target, and spreads the keys', async () => {
    const { routed } = three();
    const homes = new Map<string, Set<string>>();
    for (let round = 0; round < 5; round++) {
      for (let key = 0; key < 60; key++) {
        const answer = await routed.infer(request, { tenant: `user-${key}` });
        const seen = homes.get(`user-${key}`) ?? new Set();
        seen.add(answer.id);
        homes.set(`user-${key}`, seen);
      }
    }
    expect([...homes.values()].every((seen) => seen.size === 1)).toBe(true);
    const perTarget = new Map<string, number>();
    for (const seen of homes.values()) for (const id of seen) perTarget.set(id, (perTarget.get(id) ?? 0) + 1);
    expect([...perTarget.keys()].sort()).toEqual(['a', 'b', 'c']);
  });

  it('a call’s own affinityKey wins over the key function; a bad one is INVALID_ARGUMENT', async () => {
    const { routed } = three();
    const home = (await routed.infer(request, { affinityKey: 'session-1' })).id;
    for (let key = 0; key < 10; key++)
      expect((await routed.infer(request, { affinityKey: 'session-1', tenant: `t${key}` })).id).toBe(home);
    await expect(routed.infer(request, { affinityKey: '' })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
  });

  it('spills a key to one next choice when its target dies, and comes home when it is back', async () => {
    const { routed, targets } = three({ breaker: { openMs: 60_000 } });
    const home = (await routed.infer(request, { tenant: 'k' })).id;
    (targets[home] as FakeTarget).down = true;
    const spilled = new Set<string>();
    for (let call = 0; call < 10; call++) spilled.add((await routed.infer(request, { tenant: 'k' })).id);
    expect(spilled.size).toBe(1);
    expect(spilled.has(home)).toBe(false);
    expect(routed.breakerStates()[home]?.kind).toBe('open');
    // The breaker is open: the dead target is not tried at all any more.
    const tries = (targets[home] as FakeTarget).calls;
    await routed.infer(request, { tenant: 'k' });
    expect((targets[home] as FakeTarget).calls).toBe(tries);
  });

  it('spills a hot key to its next choice once its target holds more than its share in flight', async () => {
    const { routed, targets } = three({
      affinity: { key: (_request, options) => options.tenant, maxLoadFactor: 1 },
    });
    const home = (await routed.infer(request, { tenant: 'hot' })).id;
    for (const each of Object.values(targets)) each.hold = true;
    // Fair share of 3 calls over 3 targets is 1: the first call stays home, the others move on.
    const calls = [1, 2, 3].map(() => routed.infer(request, { tenant: 'hot' }));
    await vi.waitFor(() => expect(Object.values(targets).reduce((sum, each) => sum + each.calls, 0)).toBe(4));
    expect((targets[home] as FakeTarget).calls).toBe(2);
    for (const each of Object.values(targets)) each.release();
    const ids = (await Promise.all(calls)).map((answer) => answer.id);
    expect(ids[0]).toBe(home);
    expect(new Set(ids).size).toBe(3);
  });

  it('spills a key to its next choice when its target is at admission.maxInFlight, and only then', async () => {
    const { routed, targets } = three({ admission: { maxInFlight: 2 } });
    const home = (await routed.infer(request, { tenant: 'k' })).id;
    for (const each of Object.values(targets)) each.hold = true;
    const calls = [1, 2, 3, 4].map(() => routed.infer(request, { tenant: 'k' }));
    await vi.waitFor(() => expect(Object.values(targets).reduce((sum, each) => sum + each.calls, 0)).toBe(5));
    for (const each of Object.values(targets)) each.release();
    const ids = (await Promise.all(calls)).map((answer) => answer.id);
    // Two fit at home; the two others go to one next choice (the same one: rendezvous order).
    expect(ids.slice(0, 2)).toEqual([home, home]);
    expect(ids[2]).not.toBe(home);
    expect(ids[3]).toBe(ids[2]);
  });

  it('starts a Triton sequence on its id’s home, the same one on every router', async () => {
    const start = (id: number): InferRequest => ({
      ...request,
      parameters: { sequence_id: id, sequence_start: true },
    });
    const first = three({ route: { group: [{ route: 'a' }, { route: 'b' }, { route: 'c' }] }, affinity: {} });
    const second = three({
      route: { group: [{ route: 'a' }, { route: 'b' }, { route: 'c' }] },
      affinity: {},
    });
    const homes = new Set<string>();
    for (let id = 1; id <= 20; id++) {
      const one = (await first.routed.infer(start(id))).id;
      expect((await second.routed.infer(start(id))).id).toBe(one);
      homes.add(one);
    }
    expect(homes.size).toBe(3);
  });
});

describe('affinityOrder', () => {
  it('moves only the keys of a removed member (rendezvous hashing)', () => {
    const book = new LoadBook(1_000);
    const members = ['a', 'b', 'c', 'd'].map((first) => ({ first, weight: 1 }));
    let moved = 0;
    for (let key = 0; key < 500; key++) {
      const before = affinityOrder([...members], `k${key}`, book, 1.25)[0]?.first;
      const after = affinityOrder(
        members.filter((member) => member.first !== 'd'),
        `k${key}`,
        book,
        1.25,
      )[0]?.first;
      if (before !== 'd') expect(after).toBe(before);
      else moved += 1;
    }
    // About a quarter of the keys lived on d.
    expect(moved).toBeGreaterThan(75);
    expect(moved).toBeLessThan(175);
  });

  it('gives a member keys in proportion to its weight', () => {
    const book = new LoadBook(1_000);
    const members = [
      { first: 'big', weight: 3 },
      { first: 'small', weight: 1 },
    ];
    let big = 0;
    for (let key = 0; key < 2_000; key++)
      if (affinityOrder([...members], `k${key}`, book, 1.25)[0]?.first === 'big') big += 1;
    expect(big / 2_000).toBeGreaterThan(0.7);
    expect(big / 2_000).toBeLessThan(0.8);
  });
});
