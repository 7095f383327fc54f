// vitest globalSetup of the interop project: ONE real Triton for every interop file (start ~11 s,
// stop ~17 s, paid once per run instead of once per file). It never throws: if Triton cannot start,
// it provides the error and every test fails with it (printLogTailOnFailure()'s beforeEach in shared-triton.ts)
// and the log tail, so every Triton test fails (none is skipped). See README.md in this folder.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { ProvidedTriton } from './triton-context.js';
import { INTEROP_DIR, startTriton, type TritonHandle } from './triton-harness.js';

/** Server log of the latest interop run (the repository ignores `.tmp/`). */
export const TRITON_LOG_FILE = join(INTEROP_DIR, '..', '..', '.tmp', 'interop', 'triton.log');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let triton: TritonHandle | undefined;
  let provided: ProvidedTriton;
  try {
    triton = await startTriton({ logFile: TRITON_LOG_FILE });
    provided = {
      grpcAddress: triton.grpcAddress,
      httpAddress: triton.httpAddress,
      metricsAddress: triton.metricsAddress,
      accessToken: triton.accessToken,
      logFile: TRITON_LOG_FILE,
    };
  } catch (error) {
    provided = { error: error instanceof Error ? error.message : String(error), logFile: TRITON_LOG_FILE };
  }
  project.provide('triton', provided);
  return async () => {
    await triton?.stop();
  };
}
