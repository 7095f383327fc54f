import { ErrorCode, InfergateError, type InferResponse, type InferTransport } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { createRouter } from './infer-router.js';
import { planRoute } from './route-plan.js';

const transport: InferTransport = {
  infer: async () => {
    throw new Error('unused');
  },
  stream: () => {
    throw new Error('unused');
  },
};

describe('router config', () => {
  it.each([
    ['no targets', { targets: [] }, 'targets'],
    [
      'a duplicate name',
      {
        targets: [
          { name: 'a', transport },
          { name: 'a', transport },
        ],
      },
      "duplicate target 'a'",
    ],
    [
      'an unknown route step',
      { targets: [{ name: 'a', transport }], route: { fallback: ['a', 'b'] } },
      "unknown target 'b'",
    ],
    ['a non-transport', { targets: [{ name: 'a', transport: {} }] }, 'InferTransport'],
    [
      'a zero weight',
      { targets: [{ name: 'a', transport }], route: { group: [{ route: 'a', weight: 0 }] } },
      'route',
    ],
    [
      'a bad breaker option',
      { targets: [{ name: 'a', transport, breaker: { halfOpenMaxProbes: 0 } }] },
      'halfOpenMaxProbes',
    ],
    ['an unknown option', { targets: [{ name: 'a', transport }], retries: 3 }, 'retries'],
  ])('rejects %s with INVALID_ARGUMENT', (_, config, text) => {
    expect(() => createRouter(config as never)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument, message: expect.stringContaining(text) }),
    );
  });

  it('accepts nested routes: a weighted group as one step of a fallback chain', async () => {
    const router = createRouter({
      targets: [
        { name: 'a', transport },
        { name: 'b', transport },
        { name: 'c', transport },
      ],
      route: { fallback: [{ group: [{ route: 'a', weight: 3 }, { route: 'b' }] }, 'c'] },
    });
    expect(Object.keys(router.breakerStates())).toEqual(['a', 'b', 'c']);
    await router.close();
  });
});

describe('breaker options', () => {
  const refusing: InferTransport = {
    infer: async () => {
      throw new InfergateError(ErrorCode.Unavailable, 'connection refused');
    },
    stream: () => {
      throw new Error('unused');
    },
  };
  const answering: InferTransport = {
    infer: async (request): Promise<InferResponse> => ({
      model: request.model,
      modelVersion: '1',
      id: '',
      outputs: [],
      parameters: {},
    }),
    stream: () => {
      throw new Error('unused');
    },
  };

  it("a target's own breaker overrides the router-wide options field by field, keeping the rest", async () => {
    const router = createRouter({
      // Router-wide: one gateway failure trips a breaker.
      breaker: { consecutiveGatewayFailures: 1 },
      retry: { maxRetries: 0 },
      targets: [
        // a names only its open time: its trip rule stays the router-wide one.
        { name: 'a', transport: refusing, breaker: { openMs: 60_000, openJitter: 0 } },
        { name: 'b', transport: answering },
      ],
    });
    try {
      await router.infer({ model: 'm', inputs: [] }, {});
      const a = router.breakerStates().a;
      expect(a?.kind).toBe('open');
      // The target's own field holds too: open for its 60 s, not the router-wide default 1 s.
      expect(a?.kind === 'open' ? a.halfOpenAt - a.openedAt : undefined).toBe(60_000);
    } finally {
      await router.close();
    }
  });
});

describe('planRoute', () => {
  it('orders a weighted group by weight share and keeps the fallback chain after it', () => {
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const route = {
      fallback: [
        {
          group: [
            { route: 'a', weight: 3 },
            { route: 'b', weight: 1 },
          ],
        },
        'c',
      ],
    };
    const firsts = { a: 0, b: 0 } as Record<string, number>;
    for (let i = 0; i < 4000; i++) {
      const plan = planRoute(route, random);
      expect(plan).toHaveLength(3);
      expect(plan[2]).toBe('c');
      firsts[plan[0] as string] = (firsts[plan[0] as string] ?? 0) + 1;
    }
    expect((firsts.a ?? 0) / 4000).toBeGreaterThan(0.7);
    expect((firsts.a ?? 0) / 4000).toBeLessThan(0.8);
  });
});
