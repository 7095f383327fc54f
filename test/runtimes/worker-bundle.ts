// Bundles a Worker with esbuild the way a Workers project would (ESM, no Node platform), and says
// what went into it: the runtime matrix runs the bundle in workerd, the coldstart suite records its size.
import { build } from 'esbuild';

export interface WorkerBundle {
  code: string;
  bytes: number;
  /** Source files and packages that went into the bundle. */
  inputs: string[];
}

export async function bundleWorker(entry: string, options: { minify?: boolean } = {}): Promise<WorkerBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['@infergate/source', 'workerd', 'worker', 'browser'],
    minify: options.minify ?? false,
    metafile: true,
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  return { code: file.text, bytes: file.contents.byteLength, inputs: Object.keys(result.metafile.inputs) };
}
