import { configDefaults, defineConfig } from 'vitest/config';

const source = (path: string) => new URL(path, import.meta.url).pathname;
// Tests run the workspace packages from source.
// expect.poll's bound for every test: how long a server-side counter may take to catch up on a busy
// machine (vitest's own default, 1 s, is too short under load). A poll only waits this long when it fails.
const expectPoll = { poll: { timeout: 10_000, interval: 50 } };
const alias = [
  { find: /^@infergate\/core\/proto$/, replacement: source('./packages/core/src/proto.ts') },
  { find: /^@infergate\/core\/http$/, replacement: source('./packages/core/src/http/index.ts') },
  {
    find: /^@infergate\/core\/internal\/grpc-frames$/,
    replacement: source('./packages/core/src/h2/grpc-frames.ts'),
  },
  {
    find: /^@infergate\/core\/internal\/option-checks$/,
    replacement: source('./packages/core/src/internal/option-checks.ts'),
  },
  {
    find: /^@infergate\/core\/internal\/lazy-otel$/,
    replacement: source('./packages/core/src/internal/lazy-otel.ts'),
  },
  {
    find: /^@infergate\/core\/internal\/long-timer$/,
    replacement: source('./packages/core/src/internal/long-timer.ts'),
  },
  { find: /^@infergate\/model-config\/cli$/, replacement: source('./packages/model-config/src/cli.ts') },
  { find: /^@infergate\/([a-z-]+)$/, replacement: source('./packages/$1/src/index.ts') },
];

const unitInclude = [
  'packages/*/src/**/*.test.ts',
  'test/unit/**/*.test.ts',
  'test/runtimes/**/*.test.ts',
  'test/chaos/reference-*.test.ts',
  'examples/**/*.test.ts',
];

/**
 * The unit files the Node 24 run (`unit-node24`, npm test's second unit run) leaves out. That run
 * exists to prove the packages work on Node 24, so it runs every unit file except these, whose
 * outcome does not depend on the Node version running them: logic over in-memory fakes (no socket,
 * stream, child process, fetch or Buffer codec of the running Node under test), checks of the
 * repository's own files, and files whose subject is another program (the runtime matrix starts
 * Bun, Deno and workerd, which must run once; the Redis stores' subject is redis-server's scripts).
 * A new file runs on both Node versions until it is listed here. Every entry must name an existing
 * unit file (test/unit/node24-selection.test.ts checks it). Nothing under packages/core is listed:
 * core's transports, engines, codecs and streams are what differs between Node versions.
 */
export const notOnNode24 = [
  // The batcher's policy over fake clients (its reference-server file runs on both).
  'packages/batcher/src/batch-span.test.ts',
  'packages/batcher/src/bisection.test.ts',
  'packages/batcher/src/cancellation.test.ts',
  'packages/batcher/src/errors.test.ts',
  'packages/batcher/src/fairness.test.ts',
  'packages/batcher/src/flush-policy.test.ts',
  'packages/batcher/src/internal/batch-tensors.property.test.ts',
  'packages/batcher/src/internal/batch-tensors.test.ts',
  'packages/batcher/src/internal/fair-queue.test.ts',
  'packages/batcher/src/internal/fill-planner.test.ts',
  'packages/batcher/src/model-limits.test.ts',
  'packages/batcher/src/options.test.ts',
  'packages/batcher/src/queue-bounds.test.ts',
  'packages/batcher/src/row-routing.property.test.ts',
  'packages/batcher/src/telemetry.test.ts',
  // The CLI's argument handling and perf arithmetic, in process (the bin files run on both).
  'packages/cli/src/perf/perf-math.test.ts',
  'packages/cli/src/run-cli.test.ts',
  // Cost arithmetic, price tables, token estimates; the Redis stores (redis-server child process).
  'packages/cost/src/budget-store-signal.test.ts',
  'packages/cost/src/budget-window.test.ts',
  'packages/cost/src/chat-model-cost.test.ts',
  'packages/cost/src/cost-metrics.test.ts',
  'packages/cost/src/cost-tracker.test.ts',
  'packages/cost/src/internal/format-usd.test.ts',
  'packages/cost/src/price-catalog.test.ts',
  'packages/cost/src/redis-budget-store.test.ts',
  'packages/cost/src/token-cost.test.ts',
  'packages/cost/src/token-estimate.test.ts',
  // Provider error mapping, Retry-After and usage parsing, fixture replay: no HTTP.
  'packages/llm/src/fixture-replay.test.ts',
  'packages/llm/src/provider-errors.test.ts',
  'packages/llm/src/retry-after.test.ts',
  'packages/llm/src/usage.test.ts',
  // Model-config parsing, printing, building and linting (the model-config command runs on both).
  'packages/model-config/src/lint-model-config.test.ts',
  'packages/model-config/src/model-config-builder.test.ts',
  'packages/model-config/src/model-config-text.test.ts',
  'packages/model-config/src/multi-tenant-preset.test.ts',
  'packages/model-config/src/text-format.property.test.ts',
  'packages/pipeline/src/pipeline-graph.test.ts',
  'packages/pipeline/src/version.test.ts',
  // Router strategies over fake targets (infer-router, target-ejection and rate-limit-watch, which
  // use real servers, run on both).
  'packages/router/src/admission.test.ts',
  'packages/router/src/affinity.test.ts',
  'packages/router/src/balance.test.ts',
  'packages/router/src/breaker.test.ts',
  'packages/router/src/chat-price.test.ts',
  'packages/router/src/chat-router.test.ts',
  'packages/router/src/classify.test.ts',
  'packages/router/src/config.test.ts',
  'packages/router/src/failover.test.ts',
  'packages/router/src/hedger.test.ts',
  'packages/router/src/price-guard.test.ts',
  'packages/router/src/retry-budget.test.ts',
  'packages/router/src/router-metrics.test.ts',
  'packages/router/src/router-telemetry.test.ts',
  'packages/testing/src/simulated-gpu.test.ts',
  // The runtime matrix: Bun, Deno and workerd children, once per npm test (the Node 20 run).
  'test/runtimes/runtime-matrix.test.ts',
  // Checks of the repository: benchmark summaries, the audit script, the docs' code blocks
  // (type-checked by TypeScript, whatever Node runs it), the tests' own hygiene.
  'test/unit/bench-summary.test.ts',
  'test/unit/bench-unary-figures.test.ts',
  'test/unit/check-audit.test.ts',
  'test/unit/doc-snippets.test.ts',
  'test/unit/node24-selection.test.ts',
  'test/unit/test-hygiene.test.ts',
];

const unit = {
  resolve: { alias },
  test: {
    name: 'unit',
    expect: expectPoll,
    include: unitInclude,
    testTimeout: 20_000,
  },
};

export default defineConfig({
  test: {
    projects: [
      unit,
      // The same files but `notOnNode24`: npm test runs this project with Node 24
      // (`vitest run --project unit-node24` under any Node runs the same selection).
      {
        ...unit,
        test: { ...unit.test, name: 'unit-node24', exclude: [...configDefaults.exclude, ...notOnNode24] },
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
