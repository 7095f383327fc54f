#!/usr/bin/env node
// `pnpm audit --prod`: no high or critical advisory in the runtime dependencies of the published
// packages. When the registry cannot answer (offline, a mirror without the audit endpoint), it says
// so and does not fail: an unanswered question is not a finding.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const FAILING = new Set(['high', 'critical']);
const TIMEOUT_MS = 120_000;

/** The advisories of `pnpm audit --json` output, as { name, severity, title, url }. */
function advisoriesOf(report) {
  const advisories = report?.advisories;
  if (advisories === null || typeof advisories !== 'object') return [];
  return Object.values(advisories).map((advisory) => ({
    name: String(advisory?.module_name ?? advisory?.name ?? 'unknown'),
    severity: String(advisory?.severity ?? 'unknown').toLowerCase(),
    title: String(advisory?.title ?? ''),
    url: String(advisory?.url ?? ''),
  }));
}

/**
 * Judges one `pnpm audit --prod --json` run: `{ status, stdout, stderr, error }` →
 * `{ exitCode, lines }`. Exported for its test (test/unit/check-audit.test.ts).
 */
export function judgeAudit(run) {
  let report;
  try {
    report = JSON.parse(run.stdout ?? '');
  } catch {
    report = undefined;
  }
  const answered =
    report !== undefined &&
    report !== null &&
    typeof report === 'object' &&
    ('advisories' in report || 'metadata' in report);
  if (!answered) {
    const reason =
      run.error?.message ??
      `${run.stderr ?? ''}\n${run.stdout ?? ''}`
        .split('\n')
        .map((line) => line.replace(/^[\s│×]+/, '').trim())
        .find((line) => line !== '') ??
      `exit ${run.status}`;
    return {
      exitCode: 0,
      lines: [`audit: the registry could not answer (${reason}); runtime dependencies NOT checked`],
    };
  }
  const advisories = advisoriesOf(report);
  const counts = report.metadata?.vulnerabilities ?? {};
  const failing = advisories.filter((advisory) => FAILING.has(advisory.severity));
  const countedFailing = Number(counts.high ?? 0) + Number(counts.critical ?? 0);
  const summary = ['critical', 'high', 'moderate', 'low', 'info']
    .map(
      (severity) =>
        `${severity} ${Number(counts[severity] ?? advisories.filter((a) => a.severity === severity).length)}`,
    )
    .join(', ');
  const lines = [`audit (runtime dependencies): ${summary}`];
  for (const advisory of failing) {
    lines.push(`  ✗ ${advisory.severity} ${advisory.name}: ${advisory.title} ${advisory.url}`.trimEnd());
  }
  return { exitCode: failing.length > 0 || countedFailing > 0 ? 1 : 0, lines };
}

function pnpmCommand() {
  const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager;
  const probe = spawnSync('pnpm', ['--version'], { cwd: root, encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === pinned.split('@')[1]) return ['pnpm', []];
  return ['npx', ['--yes', pinned]];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [command, prefix] = pnpmCommand();
  const run = spawnSync(command, [...prefix, 'audit', '--prod', '--json'], {
    cwd: root,
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  const { exitCode, lines } = judgeAudit(run);
  for (const line of lines) (exitCode === 0 ? console.log : console.error)(line);
  process.exit(exitCode);
}
