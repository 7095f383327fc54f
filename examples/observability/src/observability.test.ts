import { join } from 'node:path';
import { runScript } from '@infergate/testing';
import { describe, expect, it } from 'vitest';

// The example as a user runs it: its own process, the OpenTelemetry Node SDK registered first.
const root = join(import.meta.dirname, '..', '..', '..');
const LIMIT_MS = 60_000;

function runExample() {
  return runScript(join(import.meta.dirname, 'index.ts'), {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1' },
    killAfterMs: LIMIT_MS,
  });
}

describe('observability example', () => {
  it(
    'prints the console exporter’s spans, the trace as a tree, and the Prometheus /metrics text',
    async () => {
      const { code, stdout, stderr } = await runExample();
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const [exported = '', rest = ''] = stdout.split('--- trace ---\n');
      const [tree = '', metrics = ''] = rest.split('--- /metrics ---\n');

      // ConsoleSpanExporter: every span, with the service's resource.
      expect(exported).toContain("name: 'inference.GRPCInferenceService/ModelInfer'");
      expect(exported).toContain("name: 'infergate.router.attempt'");
      expect(exported).toContain("'service.name': 'model-serving-triton-inference-server'");

      // The tree: the service's span holds four router attempts, each with its cost; every batch
      // span holds one RPC and links to the attempts it carried.
      const lines = tree.trim().split('\n');
      expect(lines[0]).toMatch(/^double vectors \(/);
      const attempts = lines.filter((line) => line.includes('infergate.router.attempt'));
      expect(attempts).toHaveLength(4);
      for (const attempt of attempts)
        expect(attempt).toMatch(/infergate\.outcome=success infergate\.cost\.usd=\d/);
      const batches = lines.filter((line) => line.includes('batch simulated_gpu'));
      const linked = batches.map((line) => Number(/links=(\d+)/.exec(line)?.[1]));
      expect(linked.reduce((sum, count) => sum + count, 0)).toBe(4);
      expect(lines.filter((line) => line.includes('GRPCInferenceService/ModelInfer'))).toHaveLength(
        batches.length,
      );

      // /metrics in the Prometheus text format: one metric of each package.
      const sample = (name: string) =>
        metrics
          .split('\n')
          .filter((line) => line.startsWith(name))
          .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
      expect(sample('rpc_client_duration_count')).toEqual([batches.length]);
      expect(sample('infergate_router_attempts_total')).toEqual([4]);
      expect(sample('infergate_batcher_batch_size_sum')).toEqual([4]);
      expect(sample('infergate_cost_spent_total')[0]).toBeGreaterThan(0);
      expect(metrics).toContain('# TYPE infergate_router_breaker_state gauge');
    },
    LIMIT_MS + 5_000,
  );
});
