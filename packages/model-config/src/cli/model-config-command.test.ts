import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTritonClient } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { parseModelConfig, printModelConfig } from '../model-config-text.js';
import { run } from './model-config-command.js';

const dir = mkdtempSync(join(tmpdir(), 'infergate-model-config-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

const unbounded = file(
  'unbounded.pbtxt',
  `name: "resnet"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching { max_queue_delay_microseconds: 100 }
`,
);
const bounded = file(
  'bounded.pbtxt',
  `name: "resnet"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching {
  max_queue_delay_microseconds: 100
  default_queue_policy { max_queue_size: 32 default_timeout_microseconds: 50000 }
}
`,
);

describe('infergate model-config lint', () => {
  it('exits 1 on dynamic batching without max_queue_size, naming the queue and what to set', async () => {
    const { code, stdout } = await cli('lint', unbounded);
    expect(code).toBe(1);
    expect(stdout).toContain(
      `${unbounded}: error unbounded-queue (dynamic_batching.default_queue_policy.max_queue_size): the queue has no max_queue_size, so it is unbounded`,
    );
    expect(stdout).toContain('Set dynamic_batching.default_queue_policy { max_queue_size: N }');
    expect(stdout).toContain(`${unbounded}: 1 error(s), 0 warning(s)`);
  });

  it('exits 0 on a clean config; warnings fail only with --strict', async () => {
    expect((await cli('lint', bounded, '--latency-budget-ms', '100')).code).toBe(0);
    const decoupled = file(
      'decoupled.pbtxt',
      `${readFileSync(bounded, 'utf8')}model_transaction_policy { decoupled: true }\n`,
    );
    expect((await cli('lint', decoupled, '--streaming-client')).code).toBe(0);
    const failing = await cli('lint', decoupled, '--no-streaming-client');
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('error decoupled-without-streaming');
    const withPriorities = file(
      'priorities.pbtxt',
      readFileSync(bounded, 'utf8').replace(
        'dynamic_batching {',
        'dynamic_batching {\n  priority_levels: 2\n  default_priority_level: 1',
      ),
    );
    expect((await cli('lint', withPriorities)).code).toBe(0);
    expect((await cli('lint', withPriorities, '--strict')).code).toBe(1);
    expect(
      (await cli('lint', withPriorities, '--strict', '--disable', 'priority-levels-without-policies')).code,
    ).toBe(0);
  });

  it('prints JSON for machines with --format json', async () => {
    const { code, stdout } = await cli('lint', unbounded, bounded, '--format', 'json', '--gpus', '1');
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as { file: string; findings: { rule: string }[] }[];
    expect(report.map((entry) => [entry.file, entry.findings.map((finding) => finding.rule)])).toEqual([
      [unbounded, ['unbounded-queue']],
      [bounded, []],
    ]);
  });

  it('exits 2 with the reason on an unreadable file, bad text, bad flags or an unknown command', async () => {
    const missing = await cli('lint', join(dir, 'missing.pbtxt'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
    const bad = await cli('lint', file('bad.pbtxt', 'name: "m"\nmax_batch_sise: 4\n'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.pbtxt:2:1: inference.ModelConfig has no field "max_batch_sise"');
    expect((await cli('lint', bounded, '--gpus', 'two')).stderr).toContain(
      "--gpus must be a number, got 'two'",
    );
    expect((await cli('lint', bounded, '--disable', 'no-such-rule')).stderr).toContain(
      'unknown rule no-such-rule',
    );
    expect((await cli('lint')).code).toBe(2);
    const unknown = await cli('lnt');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'lnt'");
    expect((await cli('--help')).stdout).toContain('usage: infergate model-config');
  });
});

describe('infergate model-config generate', () => {
  it('prints a config.pbtxt from a builder spec', async () => {
    const spec = file(
      'spec.json',
      JSON.stringify({
        name: 'm',
        maxBatchSize: 8,
        input: [{ name: 'x', dataType: 'FP32', dims: [4] }],
        dynamicBatching: { defaultQueuePolicy: { maxQueueSize: 16 } },
      }),
    );
    const { code, stdout } = await cli('generate', spec);
    expect(code).toBe(0);
    expect(parseModelConfig(stdout).maxBatchSize).toBe(8);
    expect(stdout).toContain('    dims: [ 4 ]');
  });

  it('writes both sides of a multi-tenant spec', async () => {
    const spec = file(
      'tenants.json',
      JSON.stringify({
        model: { name: 'shared', backend: 'python', instanceGroup: [{ kind: 'KIND_CPU' }] },
        tenants: {
          gold: { weight: 3, latencyTargetMs: 100, maxQueue: 16 },
          bronze: { latencyTargetMs: 1000, maxQueue: 64 },
        },
      }),
    );
    const out = join(dir, 'shared.pbtxt');
    const clientOut = join(dir, 'shared.client.json');
    const { code } = await cli('generate', spec, '--out', out, '--client-out', clientOut);
    expect(code).toBe(0);
    const config = parseModelConfig(readFileSync(out, 'utf8'));
    expect(
      config.schedulingChoice.case === 'dynamicBatching' && config.schedulingChoice.value.priorityLevels,
    ).toBe(2n);
    expect(JSON.parse(readFileSync(clientOut, 'utf8')).tenants.gold).toEqual({
      tenant: 'gold',
      priority: 1,
      timeoutMs: 100,
    });
    expect((await cli('lint', out, '--latency-budget-ms', '100')).code).toBe(0);
  });

  it('exits 2 naming what is wrong in the spec', async () => {
    const spec = file('wrong.json', JSON.stringify({ name: 'm', maxBatchSise: 8 }));
    const { code, stderr } = await cli('generate', spec);
    expect(code).toBe(2);
    expect(stderr).toContain("did you mean 'maxBatchSize'?");
    expect((await cli('generate', file('broken.json', '{ name'))).stderr).toContain('broken.json');
  });
});

describe('infergate model-config diff/apply without a server', () => {
  it('exits 2 when --url is missing or nothing listens there', async () => {
    expect((await cli('diff', bounded)).stderr).toContain('--url HOST:PORT is required');
    expect((await cli('apply', bounded, '--url', '127.0.0.1:1', '--file', 'model.py')).stderr).toContain(
      "--file takes MODEL_PATH=LOCAL_PATH (e.g. 1/model.py=./model.py), got 'model.py'",
    );
    const unreachable = await cli('diff', bounded, '--url', '127.0.0.1:1', '--timeout-ms', '2000');
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/UNAVAILABLE|DEADLINE_EXCEEDED/);
  });

  it('apply refuses a config with lint errors before calling the server', async () => {
    const { code, stderr } = await cli('apply', unbounded, '--url', '127.0.0.1:1');
    expect(code).toBe(1);
    expect(stderr).toContain('not applied (1 lint error(s)); fix them or pass --force');
  });
});

describe('infergate model-config diff/apply against the reference server, over gRPC and HTTP', () => {
  it('the same file gives the same diff over both protocols, and apply over HTTP loads it', async () => {
    const server = await startTestServer({ http: true });
    const client = createTritonClient({ url: server.url, enableGpuIpc: false });
    try {
      const live = printModelConfig(await client.modelConfig('add_sub'));
      // The edit also adds dynamic batching without a queue bound (the live config has none).
      const edited = file(
        'add_sub.pbtxt',
        `${live.replace(/max_batch_size: \d+/, 'max_batch_size: 2')}\ndynamic_batching { max_queue_delay_microseconds: 100 }\n`,
      );
      const overGrpc = await cli('diff', edited, '--url', server.url);
      const hostPort = new URL(server.httpUrl).host;
      const overHttp = await cli('diff', edited, '--url', hostPort, '--protocol', 'http');
      expect(overGrpc.code).toBe(1);
      expect(overGrpc.stdout).toContain(`~ max_batch_size: ${edited} has 2`);
      expect(overHttp).toEqual(overGrpc);
      // An http:// URL says the protocol by itself.
      expect(await cli('diff', edited, '--url', server.httpUrl)).toEqual(overGrpc);

      // The edited file's queue is unbounded: the lint error is shown, --force applies.
      const applied = await cli('apply', edited, '--url', server.httpUrl, '--force');
      expect(applied.stderr).toContain('error unbounded-queue');
      expect(applied.stdout).toContain(`loaded 'add_sub' with ${edited} as its config`);
      // The reference server runs every request as its own execution and so does not take
      // dynamic_batching; apply's check after the load reports the difference.
      expect(applied.stdout).toContain('~ dynamic_batching:');
      expect(applied.code).toBe(1);
      expect(server.repository.loads('add_sub').at(-1)?.config).toMatchObject({ max_batch_size: 2 });
      expect((await client.modelConfig('add_sub')).maxBatchSize).toBe(2);
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('exits 2 on a protocol it does not speak or a URL of the other protocol', async () => {
    const wrong = await cli('diff', bounded, '--url', '127.0.0.1:1', '--protocol', 'ftp');
    expect(wrong).toMatchObject({ code: 2 });
    expect(wrong.stderr).toContain("--protocol must be grpc or http, got 'ftp'");
    const mixed = await cli('diff', bounded, '--url', 'http://127.0.0.1:1', '--protocol', 'grpc');
    expect(mixed).toMatchObject({ code: 2 });
    expect(mixed.stderr).toContain('is an HTTP URL: use --protocol http');
  });
});
