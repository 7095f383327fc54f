// Suite `coldstart`: what a serverless cold start pays for each package — the time of
// `await import(pkg)` in a fresh Node process (median of several processes, the built ESM output)
// and the size of the built entry (raw and gzip). Baseline arm: importing an empty module.
// Also `@infergate/core/http` (the fetch-only entry) and the size of a Cloudflare Worker that
// uses it, bundled with esbuild as a Workers project would (ESM, minified, no Node platform).
// For information (no targets): the batcher's and the router's import → construction with valid
// options in a fresh process, what a serverless handler that builds them at load pays (decision 0025),
// and whether that loaded @opentelemetry/api with nothing registered (it should not: second addendum);
// the same for llm, express, pipeline and cost (third and fourth addenda).
//   pnpm build && pnpm bench coldstart [--runs 15]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { type BenchCase, flag, median, packageVersion, ROOT, report, round } from '../lib.js';

const probe = `const started = performance.now();
await import(process.argv[2]);
process.stdout.write(String(performance.now() - started));`;

/**
 * Imports a package, then makes its object with valid options: [import ms, construction ms, whether
 * @opentelemetry/api is in the require cache then (Node loads its CommonJS build for import too)].
 */
const constructProbe = `import { createRequire } from 'node:module';
const transport = { infer: async () => ({}), stream: () => ({}) };
const started = performance.now();
const loaded = await import(process.argv[2]);
const imported = performance.now();
const json = { kind: 'json' };
switch (process.argv[3]) {
  case 'batcher':
    loaded.createMicroBatcher(transport, { maxBatchSize: 32, maxQueueDelayMs: 5, tenants: { a: { weight: 2 } } });
    break;
  case 'router':
    loaded.createInferRouter({
      targets: [{ name: 'a', transport }, { name: 'b', transport, breaker: { openMs: 500 } }],
      route: { fallback: ['a', 'b'] },
      attemptTimeoutMs: 1000,
    });
    break;
  case 'llm':
    loaded.createOpenAIChatModel({ apiKey: 'sk-coldstart', baseURL: 'http://127.0.0.1:9/v1' });
    break;
  case 'express':
    loaded.infergate({ gateway: {} });
    break;
  case 'pipeline':
    loaded.createPipeline({
      name: 'coldstart',
      inputs: { x: json },
      steps: {
        echo: {
          step: loaded.functionStep({ inputs: { v: json }, outputs: { v: json }, run: async ({ v }) => ({ outputs: { v } }) }),
          inputs: { v: 'input.x' },
        },
      },
      outputs: { y: 'echo.v' },
    });
    break;
  case 'cost':
    loaded.createCostTracker({ budgets: [{ id: 'daily', scope: ['tenant'], window: 'day', hardLimitUsd: 10 }] });
    break;
  default:
    throw new Error('no construction for ' + process.argv[3]);
}
const made = performance.now();
const otelLoaded = Object.keys(createRequire(import.meta.url).cache).some((path) =>
  /[\\\\/]@opentelemetry[\\\\/]api[\\\\/]/.test(path));
process.stdout.write(JSON.stringify([imported - started, made - imported, otelLoaded]));
process.exit(0);`;

/**
 * The packages made after import: the batcher and the router validate valid options without zod
 * (decision 0025); these two and llm, express, pipeline and cost load @opentelemetry/api only once
 * something is registered with it (its second to fourth addenda), which `opentelemetryApiLoaded` shows.
 */
const CONSTRUCTED = {
  batcher: 'createMicroBatcher',
  router: 'createInferRouter',
  llm: 'createOpenAIChatModel',
  express: 'infergate',
  pipeline: 'createPipeline',
  cost: 'createCostTracker',
} as const;

/** The figures named in `ratios` (for information, no targets); the others are in `cases` only. */
const CONSTRUCT_RATIOS: ReadonlySet<string> = new Set(['batcher', 'router']);

function constructMs(name: keyof typeof CONSTRUCTED, script: string): [number, number, boolean] {
  const entry = join(ROOT, 'packages', name, 'dist', 'index.js');
  const result = spawnSync(process.execPath, [script, entry, name], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${CONSTRUCTED[name]} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as [number, number, boolean];
}

function importMs(specifier: string, script: string): number {
  const result = spawnSync(process.execPath, [script, specifier], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`import of ${specifier} failed: ${result.stderr}`);
  return Number(result.stdout);
}

/**
 * The entry and the local chunks it imports statically (transitively): what its import reads and
 * compiles. Since core's ESM build is split (tsup.config.ts), its entry file alone is a fraction.
 * Chunks reached only by `import()` (core's gRPC wire code) are left out: the import does not load them.
 */
function staticGraphBytes(entry: string): { bytes: number; gzipBytes: number; files: number } {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(
      /^(?:import|export)\s[^;]*?from\s*['"](\.\/[^'"]+)['"]|^import\s*['"](\.\/[^'"]+)['"]/gms,
    )) {
      const specifier = match[1] ?? match[2];
      if (specifier !== undefined) visit(join(dirname(file), specifier));
    }
  };
  visit(entry);
  let bytes = 0;
  let gzipBytes = 0;
  for (const file of seen) {
    const text = readFileSync(file);
    bytes += text.byteLength;
    gzipBytes += gzipSync(text).byteLength;
  }
  return { bytes, gzipBytes, files: seen.size };
}

/** A minimal Worker on the built `@infergate/core/http`: what a Worker pays to call Triton over HTTP. */
const workerSource = `import { createHttpClient } from '@infergate/core/http';
export default {
  async fetch(request, env) {
    const client = createHttpClient({ url: env.TRITON_URL });
    const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
    return Response.json(result.output('OUTPUT0').toArray());
  },
};`;

async function workerBundle(): Promise<{ bytes: number; gzipBytes: number; inputs: string[] }> {
  const result = await build({
    stdin: { contents: workerSource, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    minify: true,
    metafile: true,
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new Error('esbuild wrote no Worker bundle');
  const inputs = Object.keys(result.metafile.inputs);
  const leaked = inputs.filter((input) => /grpc-js|@bufbuild|lazy-modules/.test(input));
  if (leaked.length > 0) throw new Error(`the HTTP Worker bundle pulled in ${leaked.join(', ')}`);
  return { bytes: file.contents.byteLength, gzipBytes: gzipSync(file.contents).byteLength, inputs };
}

export async function run(): Promise<void> {
  const runs = Number(flag('runs') ?? 15);
  const script = join(tmpdir(), `infergate-coldstart-${process.pid}.mjs`);
  const empty = join(tmpdir(), `infergate-empty-${process.pid}.mjs`);
  writeFileSync(script, probe);
  writeFileSync(empty, 'export {};\n');
  const constructScript = join(tmpdir(), `infergate-construct-${process.pid}.mjs`);
  writeFileSync(constructScript, constructProbe);
  const packages = readdirSync(join(ROOT, 'packages')).filter((name) =>
    existsSync(join(ROOT, 'packages', name, 'dist', 'index.js')),
  );
  if (!packages.includes('core')) throw new Error('build first: pnpm build');
  const cases: BenchCase[] = [];
  const baseline: number[] = [];
  const times = new Map<string, number[]>(packages.map((name) => [name, []]));
  const httpEntry = join(ROOT, 'packages', 'core', 'dist', 'http.js');
  const httpTimes: number[] = [];
  const constructed = (Object.keys(CONSTRUCTED) as (keyof typeof CONSTRUCTED)[]).filter((name) =>
    packages.includes(name),
  );
  const constructTimes = new Map(
    constructed.map((name) => [name, { imported: [] as number[], made: [] as number[], otel: false }]),
  );
  for (let run = 0; run < runs; run++) {
    baseline.push(importMs(empty, script));
    for (const name of packages)
      times.get(name)?.push(importMs(join(ROOT, 'packages', name, 'dist', 'index.js'), script));
    if (existsSync(httpEntry)) httpTimes.push(importMs(httpEntry, script));
    for (const name of constructed) {
      const [imported, made, otel] = constructMs(name, constructScript);
      const arm = constructTimes.get(name);
      arm?.imported.push(imported);
      arm?.made.push(made);
      if (arm !== undefined && otel) arm.otel = true;
    }
  }
  const emptyMs = median(baseline);
  cases.push({ name: 'empty module', arm: 'baseline', load: 'import', p50Ms: emptyMs });
  const ratios: Record<string, number> = {};
  const versions: Record<string, string> = {};
  for (const name of packages) {
    const entry = join(ROOT, 'packages', name, 'dist', 'index.js');
    const bytes = statSync(entry).size;
    const gzip = gzipSync(readFileSync(entry)).byteLength;
    const ms = median(times.get(name) ?? []);
    const graph = staticGraphBytes(entry);
    cases.push({
      name: `@infergate/${name}`,
      arm: name,
      load: 'import',
      p50Ms: ms,
      extra: {
        entryBytes: bytes,
        entryGzipBytes: gzip,
        // The entry with the chunks it imports: what the import reads.
        importedBytes: graph.bytes,
        importedGzipBytes: graph.gzipBytes,
        importedFiles: graph.files,
        // Against the empty module of the same run: the machine's speed divided out.
        timesEmptyModule: Number((ms / emptyMs).toFixed(1)),
      },
    });
    versions[`@infergate/${name}`] = packageVersion(name);
    if (name === 'core') ratios.core_import_ms = ms;
  }
  for (const name of constructed) {
    const { imported, made, otel } = constructTimes.get(name) ?? { imported: [], made: [], otel: false };
    const total = median(imported.map((ms, index) => ms + (made[index] ?? 0)));
    cases.push({
      name: `@infergate/${name}: import, then ${CONSTRUCTED[name]}() with valid options`,
      arm: `${name}-construct`,
      load: 'import+construct',
      p50Ms: total,
      // Whether any of the processes had loaded @opentelemetry/api by then (no SDK registered).
      extra: { importMs: median(imported), constructMs: median(made), opentelemetryApiLoaded: otel },
    });
    if (!CONSTRUCT_RATIOS.has(name)) continue;
    ratios[`${name}_import_construct_ms`] = total;
    ratios[`${name}_construct_ms`] = median(made);
  }
  if (httpTimes.length > 0) {
    const ms = median(httpTimes);
    const graph = staticGraphBytes(httpEntry);
    cases.push({
      name: '@infergate/core/http',
      arm: 'core-http',
      load: 'import',
      p50Ms: ms,
      extra: {
        entryBytes: statSync(httpEntry).size,
        entryGzipBytes: gzipSync(readFileSync(httpEntry)).byteLength,
        importedBytes: graph.bytes,
        importedGzipBytes: graph.gzipBytes,
        importedFiles: graph.files,
        timesEmptyModule: Number((ms / emptyMs).toFixed(1)),
      },
    });
    ratios.core_http_import_ms = ms;
    const worker = await workerBundle();
    cases.push({
      name: 'Worker bundle of @infergate/core/http (esbuild, minified)',
      arm: 'worker-http',
      load: 'bundle',
      extra: { bundleBytes: worker.bytes, bundleGzipBytes: worker.gzipBytes, modules: worker.inputs.length },
    });
    ratios.http_worker_bundle_bytes = worker.bytes;
    ratios.http_worker_bundle_gzip_bytes = worker.gzipBytes;
  }
  report({
    suite: 'coldstart',
    versions,
    cases,
    ratios,
    targets: {
      core_import_ms: '<= 60',
      core_http_import_ms: 'report',
      http_worker_bundle_bytes: 'report (no grpc-js, no protobuf runtime)',
      http_worker_bundle_gzip_bytes: 'report',
    },
    command: 'pnpm build && pnpm bench coldstart',
  });
  // The generic table above shows p50 only: what each package costs to import and construct, and
  // whether anything had loaded @opentelemetry/api by then.
  console.table(
    constructed.map((name) => {
      const entry = cases.find((candidate) => candidate.arm === `${name}-construct`);
      const extra = (entry?.extra ?? {}) as {
        importMs?: number;
        constructMs?: number;
        opentelemetryApiLoaded?: boolean;
      };
      return {
        package: `@infergate/${name}`,
        'import ms': round(extra.importMs ?? Number.NaN, 3),
        'construct ms': round(extra.constructMs ?? Number.NaN, 3),
        'OpenTelemetry API loaded': extra.opentelemetryApiLoaded === true ? 'yes' : 'no',
      };
    }),
  );
}
