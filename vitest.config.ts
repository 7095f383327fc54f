import { defineConfig } from 'vitest/config';

const alias = {
  '@infergate/core': new URL('./packages/core/src/index.ts', import.meta.url).pathname,
  '@infergate/testing': new URL('./packages/testing/src/index.ts', import.meta.url).pathname,
};

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'test/unit/**/*.test.ts', 'examples/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          // One real Triton per host: run every interop file in one worker, one after another.
          fileParallelism: false,
        },
      },
    ],
  },
});
