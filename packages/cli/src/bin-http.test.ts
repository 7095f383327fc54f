import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestCertificates, startTestServer } from '@infergate/testing';
import { describe, expect, it } from 'vitest';
import { binHarness } from '../../../test/unit/bin-harness.js';

// The server-calling subcommands with --protocol http, through the real bin, against the reference
// server's KServe v2 HTTP port on 127.0.0.1 (its gRPC port answers the same state, for comparison).
const cli = binHarness({ http: true });
const infergate = (...args: string[]) => cli.run(args);
const infergateWith = (env: NodeJS.ProcessEnv, ...args: string[]) => cli.run(args, { env });
/** An http:// URL: the protocol follows from it. */
const http = () => ['--url', cli.server.httpUrl];
const hostPort = () => cli.server.httpUrl.replace(/^http:\/\//, '');

describe('infergate --protocol http (the bin)', () => {
  it('health: live, ready and the models over HTTP; 3 when a model is not ready', async () => {
    const healthy = await infergate('health', 'add_sub', '--protocol', 'http', '--url', hostPort(), '--json');
    expect(healthy.stderr).toBe('');
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({
      healthy: true,
      live: true,
      ready: true,
      server: { name: 'infergate-testing' },
      models: { add_sub: true },
    });
    const text = await infergate('health', ...http());
    expect(text.stdout).toContain(`at ${hostPort()}`);
    const missing = await infergate('health', 'no_such_model', ...http());
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain('model no_such_model: not ready');
  });

  it('metadata and models over HTTP', async () => {
    const metadata = await infergate('metadata', 'add_sub', ...http(), '--json');
    expect(metadata.code).toBe(0);
    expect(JSON.parse(metadata.stdout)).toMatchObject({
      name: 'add_sub',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32' },
        { name: 'INPUT1', datatype: 'FP32' },
      ],
    });
    const models = await infergate('models', ...http());
    expect(models.code).toBe(0);
    expect(models.stdout).toMatch(/^add_sub\s+1\s+READY/m);
  });

  it('config over HTTP prints the same JSON and pbtxt as over gRPC', async () => {
    for (const format of ['json', 'pbtxt']) {
      const overHttp = await infergate('config', 'add_sub', '--format', format, ...http());
      const overGrpc = await infergate('config', 'add_sub', '--format', format, '--url', cli.server.url);
      expect(overHttp.stderr).toBe('');
      expect(overHttp.code).toBe(0);
      expect(overGrpc.code).toBe(0);
      expect(overHttp.stdout).toBe(overGrpc.stdout);
    }
    const pbtxt = await infergate('config', 'add_sub', '--format', 'pbtxt', ...http());
    expect(pbtxt.stdout).toMatch(/^name: "add_sub"$/m);
    expect(pbtxt.stdout).toContain('name: "INPUT0"');
  });

  it('infer and stats over HTTP: the server counts the request', async () => {
    const before = cli.server.stats('add_sub').requests;
    const ones = Array.from({ length: 16 }, () => 1).join(',');
    const result = await infergate(
      'infer',
      'add_sub',
      '--input',
      `INPUT0:FP32:1x16:${ones}`,
      '--input',
      `INPUT1:FP32:1x16:${ones}`,
      ...http(),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^OUTPUT0 FP32 \[1,16\] 2 2 2 /m);
    expect(result.stdout).toMatch(/^OUTPUT1 FP32 \[1,16\] 0 0 0 /m);
    expect(cli.server.stats('add_sub').requests).toBe(before + 1);

    const stats = await infergate('stats', 'add_sub', ...http(), '--json');
    expect(stats.code).toBe(0);
    const [addSub] = JSON.parse(stats.stdout);
    expect(addSub.name).toBe('add_sub');
    expect(addSub.inference.success.count).toBeGreaterThanOrEqual(1);
  });

  it('unload and load over HTTP: the repository state follows', async () => {
    const unloaded = await infergate('unload', 'repeat', ...http());
    expect(unloaded).toMatchObject({ code: 0, stdout: 'unloaded repeat\n' });
    expect(cli.server.repository.isLoaded('repeat')).toBe(false);
    const loaded = await infergate('load', 'repeat', '--config', '{"max_batch_size": 0}', ...http());
    expect(loaded).toMatchObject({ code: 0, stdout: 'loaded repeat\n' });
    expect(cli.server.repository.isLoaded('repeat')).toBe(true);
    expect(cli.server.repository.loads('repeat').at(-1)?.config).toEqual({ max_batch_size: 0 });
  });

  it('perf over HTTP: one step with server times, every request counted by the server', async () => {
    const before = cli.server.stats('identity').requests;
    const run = await infergate(
      'perf',
      'identity',
      ...http(),
      '--concurrency',
      '2',
      '--window-ms',
      '150',
      '--max-windows',
      '3',
      '--json',
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.url).toBe(cli.server.httpUrl);
    expect(report.steps).toHaveLength(1);
    const [step] = report.steps;
    expect(step.completed).toBeGreaterThan(0);
    expect(step.errors).toBe(0);
    expect(step.server).toBeDefined();
    expect(cli.server.stats('identity').requests).toBeGreaterThanOrEqual(before + step.completed);
  });

  it('--token is sent as the triton-access-token header of a restricted HTTP endpoint', async () => {
    const restricted = await startTestServer({
      http: true,
      restricted: { groups: ['metadata'], header: 'triton-access-token', value: 's3cret' },
    });
    try {
      const allowed = await infergate(
        'metadata',
        'add_sub',
        '--url',
        restricted.httpUrl,
        '--token',
        's3cret',
      );
      expect(allowed.stderr).toBe('');
      expect(allowed.code).toBe(0);
      const refused = await infergate('metadata', 'add_sub', '--url', restricted.httpUrl);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('triton-access-token');
    } finally {
      await restricted.stop();
    }
  });

  it('a --token no HTTP header can carry is a usage error naming --token, without its value', async () => {
    const run = await infergate('metadata', 'add_sub', ...http(), '--token', 'tok-SECRET\r\nx: 1');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--token:');
    expect(run.stderr).not.toContain('--url');
    expect(run.stderr).not.toContain('SECRET');
  });

  it('https:// goes through TLS: trusted with NODE_EXTRA_CA_CERTS, refused without', async () => {
    // The reference server's HTTP port is plaintext: a TLS hop in front of it, as a load balancer.
    const dir = await mkdtemp(join(tmpdir(), 'infergate-cli-https-'));
    const certificates = generateTestCertificates(dir);
    const target = new URL(cli.server.httpUrl);
    const proxy: Server = createServer(
      { key: certificates.serverKey, cert: certificates.serverCert },
      (inbound, outbound) => {
        const forward = request(
          {
            host: target.hostname,
            port: target.port,
            method: inbound.method,
            path: inbound.url,
            headers: inbound.headers,
          },
          (answer) => {
            outbound.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outbound);
          },
        );
        forward.on('error', () => outbound.destroy());
        inbound.pipe(forward);
      },
    );
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    try {
      const env = { ...process.env, NODE_EXTRA_CA_CERTS: join(certificates.dir, 'ca.pem') };
      const trusted = await infergateWith(env, 'health', 'add_sub', '--url', `https://127.0.0.1:${port}`);
      expect(trusted.stderr).toBe('');
      expect(trusted.code).toBe(0);
      const tlsFlag = await infergateWith(
        env,
        'health',
        '--protocol',
        'http',
        '--tls',
        '--url',
        `127.0.0.1:${port}`,
      );
      expect(tlsFlag.code).toBe(0);
      const untrusted = await infergate(
        'health',
        '--url',
        `https://127.0.0.1:${port}`,
        '--timeout-ms',
        '5000',
      );
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toMatch(/^infergate: UNAVAILABLE: /);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('what HTTP cannot do exits 2 with the reason, before anything is sent', async () => {
    const before = cli.server.stats('generate').requests;
    const stream = await infergate('stream', 'generate', '--input', 'text_input:BYTES:1:hi', ...http());
    expect(stream.code).toBe(2);
    expect(stream.stderr).toContain('infergate stream is not available over HTTP');
    const batching = await infergate(
      'perf',
      'add_sub',
      '--client-batching',
      '--protocol',
      'http',
      '--url',
      hostPort(),
    );
    expect(batching.code).toBe(2);
    expect(batching.stderr).toContain('--client-batching and --shared-memory are gRPC only');
    expect(cli.server.stats('generate').requests).toBe(before);

    const ca = await infergate('health', ...http(), '--ca', 'ca.pem');
    expect(ca.code).toBe(2);
    expect(ca.stderr).toContain('--ca is gRPC only');
    const mixed = await infergate('health', '--protocol', 'grpc', ...http());
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('is an HTTP URL');
    const unknown = await infergate('health', '--protocol', 'websocket');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--protocol must be grpc or http, got 'websocket'");
  });
});
