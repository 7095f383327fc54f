import { InfergateError } from '@infergate/core';
import { describe, expect, it, vi } from 'vitest';
import { createLazyGateway } from './serverless.js';
import { errorResponse, fetchHandler, lambdaHandler } from './serverless-handlers.js';

/** A stand-in router: what a real one restores from `initialState` and saves with `toJSON()`. */
class StubRouter {
  state: Record<string, { open: boolean }>;
  constructor(initialState?: Record<string, { open: boolean }>) {
    if (initialState !== undefined && typeof initialState.a?.open !== 'boolean')
      throw new InfergateError('INVALID_ARGUMENT', 'bad breaker state');
    this.state = initialState ?? { a: { open: false } };
  }
  toJSON() {
    return this.state;
  }
}

type State = Record<string, { open: boolean }>;

describe('createLazyGateway', () => {
  it('builds once; concurrent first calls share the build and only the first is a cold start', async () => {
    const create = vi.fn(async () => ({ id: Math.random() }));
    const lazy = createLazyGateway(create);
    const [a, b] = await Promise.all([lazy.acquire(), lazy.acquire()]);
    const c = await lazy.acquire();
    expect(create).toHaveBeenCalledTimes(1);
    expect(a.gateway).toBe(b.gateway);
    expect(c.gateway).toBe(a.gateway);
    expect([a.coldStart, b.coldStart, c.coldStart]).toEqual([true, false, false]);
    expect(lazy.builds).toBe(1);
  });

  it('tries again after a failed build, and builds anew after close()', async () => {
    let calls = 0;
    const closed: number[] = [];
    const lazy = createLazyGateway({
      create: () => {
        calls++;
        if (calls === 1) throw new Error('endpoint config missing');
        return { n: calls };
      },
      close: (gateway) => {
        closed.push(gateway.n);
      },
    });
    await expect(lazy.get()).rejects.toThrow('endpoint config missing');
    expect(lazy.current).toBeUndefined();
    expect(await lazy.get()).toEqual({ n: 2 });
    await lazy.close();
    expect(closed).toEqual([2]);
    expect(await lazy.get()).toEqual({ n: 3 });
  });

  it('restores the router state from an environment variable on a cold start', async () => {
    vi.stubEnv('TEST_ROUTER_STATE', JSON.stringify({ a: { open: true } }));
    try {
      const lazy = createLazyGateway<{ router: StubRouter }, State>({
        create: ({ routerState }) => ({ router: new StubRouter(routerState) }),
        routerStateEnv: 'TEST_ROUTER_STATE',
      });
      expect((await lazy.get()).router.state).toEqual({ a: { open: true } });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a loader wins over the environment; state is saved only when it changed', async () => {
    vi.stubEnv('TEST_ROUTER_STATE', JSON.stringify({ a: { open: false } }));
    const saved: State[] = [];
    try {
      const lazy = createLazyGateway<{ router: StubRouter }, State>({
        create: ({ routerState }) => ({ router: new StubRouter(routerState) }),
        routerStateEnv: 'TEST_ROUTER_STATE',
        loadRouterState: async () => ({ a: { open: true } }),
        exportRouterState: (gateway) => gateway.router.toJSON(),
        saveRouterState: (state) => {
          saved.push(structuredClone(state));
        },
      });
      const gateway = await lazy.get();
      expect(gateway.router.state).toEqual({ a: { open: true } });
      await lazy.idle();
      expect(saved).toEqual([]); // unchanged since it was loaded
      gateway.router.state = { a: { open: false } };
      await lazy.idle();
      await lazy.idle();
      expect(saved).toEqual([{ a: { open: false } }]);
      await lazy.persist({ force: true });
      expect(saved).toHaveLength(2);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a corrupt or rejected saved state never stops a cold start', async () => {
    const errors: string[] = [];
    const notJson = createLazyGateway<{ router: StubRouter }, State>({
      create: ({ routerState }) => ({ router: new StubRouter(routerState) }),
      loadRouterState: () => '{ not json',
      onRouterStateError: (error) => errors.push(error.rawMessage),
    });
    expect((await notJson.get()).router.state).toEqual({ a: { open: false } });
    const rejected = createLazyGateway<{ router: StubRouter }, State>({
      create: ({ routerState }) => ({ router: new StubRouter(routerState) }),
      loadRouterState: () => ({ a: { open: 'yes' } }) as unknown as State,
      onRouterStateError: (error) => errors.push(error.rawMessage),
    });
    expect((await rejected.get()).router.state).toEqual({ a: { open: false } });
    expect(rejected.builds).toBe(2);
    const failing = createLazyGateway({
      create: () => ({}),
      loadRouterState: () => Promise.reject(new Error('table not found')),
      onRouterStateError: (error) => errors.push(error.rawMessage),
    });
    await failing.get();
    expect(errors).toEqual([
      'the saved router state is not a JSON object',
      'the gateway rejected the saved router state; started without it',
      'loading the saved router state failed',
    ]);
  });
});

describe('lambdaHandler', () => {
  it('passes the gateway, a deadline from the remaining time and cold start; runs idle before returning', async () => {
    const order: string[] = [];
    const lazy = createLazyGateway({ create: () => ({ name: 'gw' }), idle: () => void order.push('idle') });
    const handler = lambdaHandler(
      lazy,
      async (event: number, { gateway, timeoutMs, coldStart, requestId }) => {
        order.push('handle');
        return { event, name: gateway.name, timeoutMs, coldStart, requestId };
      },
      { safetyMarginMs: 100 },
    );
    const context = { awsRequestId: 'aws-1', getRemainingTimeInMillis: () => 3000 };
    expect(await handler(1, context)).toEqual({
      event: 1,
      name: 'gw',
      timeoutMs: 2900,
      coldStart: true,
      requestId: 'aws-1',
    });
    expect((await handler(2, {})).coldStart).toBe(false);
    expect(order).toEqual(['handle', 'idle', 'handle', 'idle']);
  });
});

describe('fetchHandler', () => {
  it('answers with the handler Response and the request id', async () => {
    const lazy = createLazyGateway(() => ({ greeting: 'hi' }));
    const handler = fetchHandler(lazy, async (request, { gateway }) =>
      Response.json({ greeting: gateway.greeting, path: new URL(request.url).pathname }),
    );
    const response = await handler(
      new Request('http://fn.local/hello', { headers: { 'x-request-id': 'r-42' } }),
    );
    expect(await response.json()).toEqual({ greeting: 'hi', path: '/hello' });
    expect(response.headers.get('x-request-id')).toBe('r-42');
  });

  it('maps errors to the JSON error body and HTTP status (BUDGET_EXCEEDED → 429 + Retry-After)', async () => {
    const lazy = createLazyGateway(() => ({}));
    const handler = fetchHandler(lazy, async () => {
      throw new InfergateError('BUDGET_EXCEEDED', 'daily budget spent', { retryAfterMs: 1500 });
    });
    const response = await handler(new Request('http://fn.local/', { method: 'POST' }));
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    const body = (await response.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('BUDGET_EXCEEDED');
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
    expect(errorResponse(new Error('boom'), 'r').status).toBe(500);
  });

  it('takes the caller’s request id only when it is printable ASCII up to 128 characters, as Express does', async () => {
    const lazy = createLazyGateway(() => ({}));
    const handler = fetchHandler(lazy, async () => {
      throw new InfergateError('NOT_FOUND', 'no such thing');
    });
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const given of ['x'.repeat(129), 'two words', 'caf\u00e9']) {
      const response = await handler(new Request('http://fn.local/', { headers: { 'x-request-id': given } }));
      const body = (await response.json()) as { error: { requestId: string } };
      expect(body.error.requestId).toMatch(uuid);
      expect(response.headers.get('x-request-id')).toBe(body.error.requestId);
    }
    const kept = await handler(new Request('http://fn.local/', { headers: { 'x-request-id': 'r-7' } }));
    expect(kept.headers.get('x-request-id')).toBe('r-7');
  });
});
