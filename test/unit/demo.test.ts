import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScript, type ScriptRun } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANTS } from '../../scripts/demo/tenants.js';

// `npm run demo`, shortened: the real script as a child process, as the README's first command runs it.
const root = join(import.meta.dirname, '..', '..');
const LIMIT_MS = 60_000;

type Run = ScriptRun;

/** The demo in its own process, run by this test's Node (the Node 24 pass runs it on Node 24). */
function runDemo(args: readonly string[]): Promise<Run> {
  return runScript(join(root, 'scripts', 'demo.ts'), {
    cwd: root,
    args,
    env: { ...process.env, NO_COLOR: '1' },
    killAfterMs: LIMIT_MS,
  });
}

const count = (text: string) => Number(text.replace(/,/g, ''));

describe('npm run demo', () => {
  let dir: string;
  let run: Run;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'infergate-demo-'));
    run = await runDemo(['--duration', '3', '--report-dir', dir]);
  }, LIMIT_MS + 5_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('prints a summary naming every tenant, within 80 columns', () => {
    const summary = run.stdout.slice(run.stdout.indexOf('Triton inference'));
    expect(summary).not.toBe('');
    for (const tenant of TENANTS) expect(summary).toMatch(new RegExp(`^  ${tenant.name}\\s`, 'm'));
    expect(summary).toContain('Cost by tenant');
    expect(run.stdout.split('\n').filter((line) => line.length > 80)).toEqual([]);
  });

  it('shows the injected failure: fallbacks or a breaker trip', () => {
    const fallbacks = /fallbacks: Triton ([\d,]+), chat ([\d,]+)/.exec(run.stdout);
    const trips = /breaker trips: ([^\n]+)/.exec(run.stdout);
    expect(fallbacks).not.toBeNull();
    expect(trips).not.toBeNull();
    const total = count(fallbacks?.[1] ?? '0') + count(fallbacks?.[2] ?? '0');
    expect(total > 0 || trips?.[1] !== 'none').toBe(true);
    expect(run.stdout).toContain('0 wrong rows');
  });

  it('writes a self-contained HTML report with SVG charts', () => {
    const path = /HTML report: (\S+\.html)/.exec(run.stdout)?.[1];
    expect(path).toBeDefined();
    const file = join(root, path as string); // printed relative to the working directory when below it
    const html = readFileSync(existsSync(path as string) ? (path as string) : file, 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html.match(/<svg/g)?.length ?? 0).toBeGreaterThanOrEqual(5);
    expect(html).not.toMatch(/\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?\/\//i);
    expect(html).not.toMatch(/url\(\s*["']?(?:https?:)?\/\//i);
    expect(html).not.toMatch(/<script|<link|@import/i);
    for (const tenant of TENANTS) expect(html).toContain(tenant.name);
  });
});
