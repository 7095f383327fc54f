// The runtime matrix: the same small program (checks.ts: infer on several datatypes and a streamed
// generation) in every runtime users deploy to, against the reference server on 127.0.0.1:
// - Node (this process's version), gRPC and HTTP; npm test runs this file once, in its Node 20 run
//   (vitest.config.ts's `notOnNode24`), and names the Node 24 binary it installed in
//   INFERGATE_NODE24_BIN: the program then runs in Node 24 too;
// - Bun, gRPC and HTTP;
// - Deno, HTTP and gRPC (grpc-js over Deno's node:http2 works for unary and streaming calls);
// - Cloudflare's workerd, HTTP from a Worker bundled from `@infergate/core/http` alone.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bunBinary, denoBinary, type ProgramRun, RUNTIMES_DIR, runProgram, TSX_CLI } from './runtimes.js';
import { bundleWorker } from './worker-bundle.js';
import { startWorkerd } from './workerd-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ http: true });
});

afterAll(async () => {
  await server?.stop();
});

const program = (protocol: 'http' | 'grpc') => join(RUNTIMES_DIR, `${protocol}-program.ts`);
const target = (protocol: 'http' | 'grpc') => (protocol === 'http' ? server.httpUrl : server.url);

/** Every check passed, or the failing checks and the program's output in the message. */
function expectPassed(run: ProgramRun): void {
  const failed = run.report?.checks.filter((check) => !check.ok) ?? [];
  expect(
    { code: run.code, ok: run.report?.ok, failed },
    `stdout:\n${run.stdout}\nstderr:\n${run.stderr.slice(-4000)}`,
  ).toEqual({ code: 0, ok: true, failed: [] });
  expect(run.report?.checks.length).toBe(6);
}

const runners: Record<string, (protocol: 'http' | 'grpc') => Promise<ProgramRun>> = {
  [`node ${process.version}`]: (protocol) =>
    runProgram(process.execPath, [
      TSX_CLI,
      '--conditions=@infergate/source',
      program(protocol),
      target(protocol),
    ]),
  bun: (protocol) =>
    runProgram(bunBinary(), ['--conditions=@infergate/source', program(protocol), target(protocol)]),
  deno: (protocol) =>
    runProgram(
      denoBinary(),
      [
        'run',
        '--allow-all',
        '--sloppy-imports',
        '--conditions=@infergate/source',
        program(protocol),
        target(protocol),
      ],
      { env: { DENO_DIR: join(tmpdir(), 'infergate-deno-cache'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } },
    ),
};

const node24 = process.env.INFERGATE_NODE24_BIN;
if (node24 !== undefined && node24 !== process.execPath) {
  runners['node 24 (INFERGATE_NODE24_BIN)'] = (protocol) =>
    runProgram(node24, [TSX_CLI, '--conditions=@infergate/source', program(protocol), target(protocol)]);
}

describe('the same program in every runtime', () => {
  for (const [runtime, run] of Object.entries(runners)) {
    for (const protocol of ['http', 'grpc'] as const) {
      it(`${runtime}: ${protocol}`, { timeout: 120_000 }, async () => {
        expectPassed(await run(protocol));
      });
    }
  }

  it('workerd: http from a Worker, with no Buffer in the runtime', { timeout: 120_000 }, async () => {
    const bundle = await bundleWorker(join(RUNTIMES_DIR, 'worker.ts'));
    const workerd = await startWorkerd(bundle.code);
    try {
      const response = await fetch(`${workerd.url}/?target=${encodeURIComponent(server.httpUrl)}`, {
        signal: AbortSignal.timeout(60_000),
      });
      const report = (await response.json()) as {
        ok: boolean;
        checks: { ok: boolean }[];
        hasBuffer: boolean;
      };
      expect(report, workerd.log()).toMatchObject({ ok: true, hasBuffer: false });
      expect(report.checks).toHaveLength(6);
    } finally {
      await workerd.stop();
    }
  });

  it('a Worker bundle of @infergate/core/http holds no grpc-js, protobuf runtime or node: module', async () => {
    const bundle = await bundleWorker(join(RUNTIMES_DIR, 'worker.ts'), { minify: true });
    expect(bundle.inputs.some((input) => input.includes('packages/core/src/http/'))).toBe(true);
    expect(bundle.inputs.filter((input) => /@grpc|grpc-js|@bufbuild|node:|lazy-modules/.test(input))).toEqual(
      [],
    );
    expect(bundle.code).not.toMatch(/from\s*["']node:|require\(["']node:/);
  });
});
