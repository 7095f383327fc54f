import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateTestCertificates, startTestServer } from '@infergate/testing';
import { describe, expect, it } from 'vitest';
import { binHarness, root } from '../../../test/unit/bin-harness.js';
import { readNpy, writeNpy } from './npy.js';

// Every subcommand is run through the real bin against the reference server on 127.0.0.1.
const cli = binHarness();
const infergate = (...args: string[]) => cli.run(args);
const url = () => ['--url', cli.server.url];

describe('infergate (the bin)', () => {
  it('model-config lint: exits 1 and names the queue when dynamic batching has no max_queue_size', async () => {
    const file = join(cli.scratch, 'unbounded.pbtxt');
    await writeFile(
      file,
      'name: "m"\nbackend: "python"\nmax_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 100 }\n',
    );
    const linted = await infergate('model-config', 'lint', file);
    expect(linted.code).toBe(1);
    expect(`${linted.stdout}${linted.stderr}`).toContain('max_queue_size');
  });

  it('health: 0 when the server and the models are ready, 3 when a model is not', async () => {
    const healthy = await infergate('health', 'add_sub', ...url(), '--json');
    expect(healthy.stderr).toBe('');
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({
      healthy: true,
      live: true,
      ready: true,
      server: { name: 'infergate-testing' },
      models: { add_sub: true },
    });
    const missing = await infergate('health', 'no_such_model', ...url());
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain('model no_such_model: not ready');
  });

  it('health: 1 with a clear UNAVAILABLE message when nothing listens', async () => {
    const down = await infergate('health', '--url', '127.0.0.1:1', '--timeout-ms', '3000');
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^infergate: (UNAVAILABLE|DEADLINE_EXCEEDED): /);
  });

  it('health over TLS: --ca trusts the server, without it the certificate is refused', async () => {
    await mkdir(join(cli.scratch, 'certs'), { recursive: true });
    const certificates = generateTestCertificates(join(cli.scratch, 'certs'));
    const secure = await startTestServer({
      tls: { key: certificates.serverKey, cert: certificates.serverCert },
    });
    try {
      const trusted = await infergate(
        'health',
        '--url',
        secure.url,
        '--ca',
        join(certificates.dir, 'ca.pem'),
      );
      // (Node warns on stderr that grpc-js sends an IP address as the TLS server name.)
      expect(trusted.stderr).not.toContain('infergate:');
      expect(trusted.code).toBe(0);
      const untrusted = await infergate('health', '--url', secure.url, '--tls', '--timeout-ms', '3000');
      expect(untrusted.code).toBe(1);
      const missing = await infergate('health', '--url', secure.url, '--ca', join(cli.scratch, 'nope.pem'));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--ca: cannot read');
    } finally {
      await secure.stop();
    }
  });

  it('models: the repository index with states, as a table and as JSON', async () => {
    const text = await infergate('models', ...url());
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^MODEL\s+VERSION\s+STATE\s+REASON$/m);
    expect(text.stdout).toMatch(/^add_sub\s+1\s+READY$/m);
    const json = await infergate('models', ...url(), '--json');
    expect(JSON.parse(json.stdout)).toContainEqual({
      name: 'generate',
      version: '1',
      state: 'READY',
      reason: '',
    });
  });

  it('metadata and config of a model', async () => {
    const metadata = await infergate('metadata', 'add_sub', ...url(), '--json');
    expect(metadata.code).toBe(0);
    expect(JSON.parse(metadata.stdout)).toMatchObject({
      name: 'add_sub',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'FP32', shape: [-1, 16] },
      ],
    });
    const config = await infergate('config', 'add_sub', ...url());
    expect(config.code).toBe(0);
    expect(JSON.parse(config.stdout)).toMatchObject({ name: 'add_sub', max_batch_size: 64 });
    const pbtxt = await infergate('config', 'add_sub', '--format', 'pbtxt', ...url());
    expect(pbtxt.code).toBe(0);
    expect(pbtxt.stdout).toContain('name: "add_sub"');
    expect(pbtxt.stdout).toContain('max_batch_size: 64');
    const bad = await infergate('config', 'add_sub', '--format', 'yaml', ...url());
    expect(bad.code).toBe(2);
  });

  it('infer: inputs from values, a JSON file and a .npy file; outputs printed and written as .npy', async () => {
    const ones = join(cli.scratch, 'ones.json');
    await writeFile(ones, JSON.stringify([Array.from({ length: 16 }, () => 1)]));
    const seq = join(cli.scratch, 'seq.npy');
    const values = Float32Array.from({ length: 16 }, (_, index) => index);
    await writeFile(seq, writeNpy({ datatype: 'FP32', shape: [1, 16], data: values }));
    const out = join(cli.scratch, 'out');
    const result = await infergate(
      'infer',
      'add_sub',
      '--input',
      `INPUT0:::@${seq}`,
      '--input',
      `INPUT1:FP32:1x16:@${ones}`,
      '--output-dir',
      out,
      ...url(),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^OUTPUT0 FP32 \[1,16\] 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16$/m);
    expect(result.stdout).toMatch(/^OUTPUT1 FP32 \[1,16\] -1 0 1 2 /m);
    const sum = readNpy(await readFile(join(out, 'OUTPUT0.npy')));
    expect(sum.shape).toEqual([1, 16]);
    expect(Array.from(sum.data as Float32Array)).toEqual(Array.from(values, (value) => value + 1));

    const inline = await infergate(
      'infer',
      'identity',
      '--input',
      'INPUT0:BYTES:2:hello,world',
      ...url(),
      '--json',
    );
    expect(inline.code).toBe(0);
    expect(JSON.parse(inline.stdout).outputs[0]).toEqual({
      name: 'OUTPUT0',
      datatype: 'BYTES',
      shape: [2],
      data: ['hello', 'world'],
    });
  });

  it('infer: a bad input spec is a usage error (2) before anything is sent; a server error is 1', async () => {
    const before = cli.server.stats('add_sub').requests;
    const bad = await infergate('infer', 'add_sub', '--input', 'INPUT0:FP32:2x16:1,2,3', ...url());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('shape [2,16] needs 32 values, got 3');
    expect(bad.stderr).toContain("Run 'infergate infer --help' for the options.");
    const unknownType = await infergate('infer', 'add_sub', '--input', 'INPUT0:FLOAT:1:1', ...url());
    expect(unknownType.code).toBe(2);
    expect(unknownType.stderr).toContain("unknown datatype 'FLOAT'");
    expect(cli.server.stats('add_sub').requests).toBe(before);
    const rejected = await infergate('infer', 'add_sub', '--input', 'INPUT0:FP32:4:1,2,3,4', ...url());
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toMatch(/^infergate: INVALID_ARGUMENT: .*INPUT0/);
  });

  it('stream: every response of the decoupled generate model, one JSON line each', async () => {
    const result = await infergate(
      'stream',
      'generate',
      '--input',
      'text_input:BYTES:1:one two three',
      '--input',
      'stream:BOOL:1:true',
      '--output',
      'text_output',
      ...url(),
      '--json',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.index)).toEqual([0, 1, 2]);
    expect(lines.map((line) => line.outputs[0].data[0]).join('')).toBe('one two three');
  });

  it('stream: --timeout-ms beyond 2^31 − 1 ms bounds the stream without ending it at once', async () => {
    // Each response waits 20 ms: a bound that fired after 1 ms (AbortSignal.timeout's overflow)
    // ended the stream before its first.
    const result = await infergate(
      'stream',
      'generate',
      '--input',
      'text_input:BYTES:1:one two',
      '--input',
      'stream:BOOL:1:true',
      '--parameter',
      'delay_ms=20',
      '--timeout-ms',
      '3000000000',
      ...url(),
      '--json',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('stats: counts of a model after an inference', async () => {
    await infergate('infer', 'identity', '--input', 'INPUT0:BYTES:1:x', ...url());
    const stats = await infergate('stats', 'identity', ...url(), '--json');
    expect(stats.code).toBe(0);
    const [identity] = JSON.parse(stats.stdout);
    expect(identity.name).toBe('identity');
    expect(identity.inference.success.count).toBeGreaterThanOrEqual(1);
    const table = await infergate('stats', ...url());
    expect(table.stdout).toMatch(/^MODEL\s+VERSION\s+SUCCESS\s+FAIL/);
    expect(table.stdout).toMatch(/^add_sub\s+1\s+\d+\s+\d+/m);
  });

  it('unload and load: the repository state follows', async () => {
    const unloaded = await infergate('unload', 'repeat', ...url());
    expect(unloaded).toMatchObject({ code: 0, stdout: 'unloaded repeat\n' });
    expect(cli.server.repository.isLoaded('repeat')).toBe(false);
    const loaded = await infergate('load', 'repeat', '--config', '{"max_batch_size": 0}', ...url());
    expect(loaded).toMatchObject({ code: 0, stdout: 'loaded repeat\n' });
    expect(cli.server.repository.isLoaded('repeat')).toBe(true);
    expect(cli.server.repository.loads('repeat').at(-1)?.config).toEqual({ max_batch_size: 0 });
    const badConfig = await infergate('load', 'repeat', '--config', '{oops', ...url());
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toContain('--config is not JSON');
  });

  it('wrong command lines exit 2 with the reason; --help exits 0', async () => {
    const unknown = await infergate('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const option = await infergate('models', '--colour');
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--colour'");
    const http = await infergate('models', '--protocol', 'http', '--url', `grpc://${cli.server.url}`);
    expect(http.code).toBe(2);
    expect(http.stderr).toContain('is a gRPC URL: --protocol http needs http:// or https://');
    const help = await infergate('--help');
    expect(help.code).toBe(0);
    for (const name of [
      'health',
      'models',
      'metadata',
      'config',
      'infer',
      'stream',
      'stats',
      'load',
      'unload',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    }
    expect(help.stdout).toMatch(/^ {2}serve-test +\S/m);
  });

  it('serve-test: serves the reference server (gRPC, and HTTP with --http-port) and the fake LLM APIs until SIGINT', async () => {
    const [node, script] = cli.command;
    const child = spawn(node, [script, 'serve-test', '--port', '0', '--http-port', '0', '--json'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
        });
        child.once('exit', () => reject(new Error(`serve-test exited before listening: ${text}`)));
      });
      const addresses = JSON.parse(line) as {
        triton: string;
        tritonHttp: string;
        openai: string;
        anthropic: string;
      };
      expect(addresses.triton).toMatch(/^127\.0\.0\.1:\d+$/);
      const health = await infergate('health', 'generate', '--url', addresses.triton);
      expect(health.code).toBe(0);
      expect(addresses.tritonHttp).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const overHttp = await infergate('health', 'add_sub', '--url', addresses.tritonHttp, '--json');
      expect(overHttp.stderr).toBe('');
      expect(JSON.parse(overHttp.stdout)).toMatchObject({ healthy: true, models: { add_sub: true } });
      const models = await fetch(`${addresses.openai}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(models.status).toBe(200);
      expect(addresses.anthropic).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});
