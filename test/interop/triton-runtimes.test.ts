// The runtime matrix's program (test/runtimes/checks.ts: inference on several datatypes and a
// streamed generation) in Node against the interop run's real Triton, over HTTP and over gRPC.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNTIMES_DIR, runProgram, TSX_CLI } from '../runtimes/runtimes.js';
import { printLogTailOnFailure, sharedTriton } from './shared-triton.js';

printLogTailOnFailure();

describe(`the runtime program in Node ${process.version} against real Triton`, () => {
  for (const protocol of ['http', 'grpc'] as const) {
    it(`${protocol}: every check passes`, async () => {
      const triton = sharedTriton();
      const url = protocol === 'http' ? `http://${triton.httpAddress}` : triton.grpcAddress;
      const run = await runProgram(process.execPath, [
        TSX_CLI,
        '--conditions=@infergate/source',
        join(RUNTIMES_DIR, `${protocol}-program.ts`),
        url,
        '--triton',
      ]);
      const failed = run.report?.checks.filter((check) => !check.ok) ?? [];
      expect(
        { code: run.code, ok: run.report?.ok, failed },
        `${run.stdout}\n${run.stderr.slice(-4000)}`,
      ).toEqual({
        code: 0,
        ok: true,
        failed: [],
      });
      expect(run.report?.checks).toHaveLength(6);
    });
  }
});
