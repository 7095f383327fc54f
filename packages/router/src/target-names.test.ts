import { ErrorCode, type InferTransport } from '@infergate/core';
import type { ChatModel } from '@infergate/llm';
import { describe, expect, it } from 'vitest';
import { createChatRouter } from './chat-router.js';
import { routerConfigSchema } from './config.js';
import { createInferRouter } from './infer-router.js';
import { acceptRouterOptions } from './internal/accept-router-options.js';

// Records keyed by target name (breakerStates(), toJSON(), an error's per-target details) hold an
// own entry for every target, whatever its name: a plain assignment under `__proto__` replaced the
// record's prototype and lost the entry, and JSON.stringify left it out.

const transport: InferTransport = {
  infer: async () => ({ model: 'm', modelVersion: '', id: '', parameters: {}, outputs: [] }),
  stream: async function* () {},
};
const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
const targets = NAMES.map((name) => ({ name, transport }));

/** The record's own entry under `name`: never one of Object.prototype's members. */
const own = <V>(record: Record<string, V>, name: string): V | undefined =>
  Object.hasOwn(record, name) ? record[name] : undefined;

describe('records keyed by target name', () => {
  it('breakerStates() and toJSON() have an own entry per target, also under __proto__', async () => {
    const router = createInferRouter({ targets });
    try {
      const states = router.breakerStates();
      expect(Object.keys(states)).toEqual(NAMES);
      expect(Object.getPrototypeOf(states)).toBe(Object.prototype);
      for (const name of NAMES) expect(own(states, name)?.kind).toBe('closed');
      const saved = router.toJSON();
      expect(Object.keys(saved)).toEqual(NAMES);
      expect(Object.getPrototypeOf(saved)).toBe(Object.prototype);
      expect(Object.keys(JSON.parse(JSON.stringify(router)))).toEqual(NAMES);
    } finally {
      await router.close();
    }
  });

  it('a target named __proto__ restores its saved state from toJSON() through JSON', async () => {
    const first = createInferRouter({ targets });
    first.breaker('__proto__').eject('test');
    first.breaker('constructor').eject('test');
    const json = JSON.stringify(first);
    await first.close();
    const second = createInferRouter({ targets, initialState: JSON.parse(json) });
    try {
      const states = second.breakerStates();
      expect(own(states, '__proto__')?.kind).toBe('open');
      expect(own(states, 'constructor')?.kind).toBe('open');
      expect(own(states, 'toString')?.kind).toBe('closed');
      expect(own(states, 'hasOwnProperty')?.kind).toBe('closed');
    } finally {
      await second.close();
    }
  });

  it("initialState's __proto__ entry is checked like any other: a bad one is refused, not dropped", () => {
    for (const saved of ['{"__proto__":5}', '{"__proto__":{"version":1,"state":{"kind":"ajar"}}}'])
      expect(() => createInferRouter({ targets, initialState: JSON.parse(saved) })).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
  });

  it('options name such targets consistently, with zod and without: a route to them, unknown and duplicate names', async () => {
    const source = createInferRouter({
      targets: targets.filter(({ name }) => name !== 'constructor' && name !== 'hasOwnProperty'),
    });
    const saved = JSON.parse(JSON.stringify(source));
    await source.close();
    const valid = {
      targets,
      route: { fallback: ['__proto__', 'constructor', 'toString'] },
      initialState: saved,
    };
    const accepted = acceptRouterOptions(valid);
    const parsed = routerConfigSchema().parse(valid);
    expect(accepted).toBeDefined();
    expect(Object.keys(accepted?.initialState ?? {})).toEqual(['__proto__', 'toString']);
    expect(Object.keys(parsed.initialState ?? {})).toEqual(['__proto__', 'toString']);
    const router = createInferRouter(valid);
    expect(own(router.breakerStates(), '__proto__')?.kind).toBe('closed');
    await router.close();
    const invalid = [
      { targets: [{ name: 'a', transport }], route: 'toString' },
      { targets: [{ name: 'a', transport }], route: '__proto__' },
      { targets: [...targets, { name: '__proto__', transport }] },
    ];
    for (const options of invalid) {
      expect(acceptRouterOptions(options)).toBeUndefined();
      expect(routerConfigSchema().safeParse(options).success).toBe(false);
      expect(() => createInferRouter(options)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
  });

  it('a chat router keys its records the same way', async () => {
    const model: ChatModel = {
      provider: 'p',
      chat: async () => {
        throw new Error('unused');
      },
      chatStream: async function* () {},
    };
    const router = createChatRouter({ targets: NAMES.map((name) => ({ name, model })) });
    try {
      expect(Object.keys(router.breakerStates())).toEqual(NAMES);
      expect(Object.keys(router.toJSON())).toEqual(NAMES);
    } finally {
      await router.close();
    }
  });
});
