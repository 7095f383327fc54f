import type { InferTransport } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { createInferRouter } from './infer-router.js';

// A saved `initialState` is looked up by target name. Names that are also keys of every object
// (`constructor`, `toString`, `__proto__`, …) must find only what the record itself holds: an empty
// or partial save (a cold start's first run) restores nothing for them, and a saved state restores.

/** Never called: the routers are only made and read. */
const transport: InferTransport = {
  infer: async () => {
    throw new Error('unused');
  },
  stream: () => {
    throw new Error('unused');
  },
};
const NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'];

describe('initialState by target name', () => {
  for (const name of NAMES) {
    it(`a target named ${name} starts closed when the saved states do not name it`, async () => {
      const router = createInferRouter({ targets: [{ name, transport }], initialState: {} });
      try {
        expect(router.breakerStates()[name]?.kind).toBe('closed');
      } finally {
        await router.close();
      }
    });
  }

  it('a target named constructor restores its own saved state', async () => {
    const saved = JSON.parse(
      '{"constructor":{"version":1,"state":{"kind":"open","trips":1,"openedAt":1,"halfOpenAt":9e15}}}',
    );
    const router = createInferRouter({ targets: [{ name: 'constructor', transport }], initialState: saved });
    try {
      expect(router.breakerStates()['constructor' as string]?.kind).toBe('open');
    } finally {
      await router.close();
    }
  });
});
