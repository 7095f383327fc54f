import { defineConfig } from 'vitest/config';

const source = (path: string) => new URL(path, import.meta.url).pathname;
// Tests run the workspace packages from source.
// expect.poll's bound for every test: how long a server-side counter may take to catch up on a busy
// machine (vitest's own default, 1 s, is too short under load). A poll only waits this long when it fails.
const expectPoll = { poll: { timeout: 10_000, interval: 50 } };
const alias = [
  { find: /^@infergate\/core\/proto$/, replacement: source('./packages/core/src/proto.ts') },
  { find: /^@infergate\/core\/http$/, replacement: source('./packages/core/src/http/index.ts') },
  { find: /^@infergate\/model-config\/cli$/, replacement: source('./packages/model-config/src/cli.ts') },
  { find: /^@infergate\/([a-z-]+)$/, replacement: source('./packages/$1/src/index.ts') },
];

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          expect: expectPoll,
          include: [
            'packages/*/src/**/*.test.ts',
            'test/unit/**/*.test.ts',
            'test/runtimes/**/*.test.ts',
            'test/chaos/reference-*.test.ts',
            'examples/**/*.test.ts',
          ],
          testTimeout: 20_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'interop',
          expect: expectPoll,
          include: ['test/interop/**/*.test.ts', 'test/chaos/triton-*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          // One real Triton for the whole project (test/interop/README.md): started here, shared by
          // every file through inject('triton'), stopped when the run ends.
          globalSetup: ['test/interop/global-setup.ts'],
          // Files share the server's state (log/trace settings, repository, shared memory, slow_queue):
          // run them in one worker, one after another.
          fileParallelism: false,
        },
      },
    ],
  },
});
