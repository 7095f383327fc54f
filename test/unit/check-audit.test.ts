import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

interface AuditRun {
  status: number | null;
  stdout?: string;
  stderr?: string;
  error?: Error;
}
type JudgeAudit = (run: AuditRun) => { exitCode: number; lines: string[] };

const script = pathToFileURL(join(import.meta.dirname, '..', '..', 'scripts', 'check-audit.mjs')).href;
const load = async () => ((await import(script)) as { judgeAudit: JudgeAudit }).judgeAudit;

const report = (advisories: Record<string, unknown>, vulnerabilities: Record<string, number>) =>
  JSON.stringify({ advisories, metadata: { vulnerabilities } });

describe('scripts/check-audit.mjs', () => {
  it('fails on a high or critical advisory in runtime dependencies, naming it', async () => {
    const judgeAudit = await load();
    const verdict = judgeAudit({
      status: 1,
      stdout: report(
        {
          1: {
            module_name: 'left-pad',
            severity: 'critical',
            title: 'Remote code execution',
            url: 'https://x/1',
          },
        },
        { critical: 1, high: 0, moderate: 0, low: 0, info: 0 },
      ),
    });
    expect(verdict.exitCode).toBe(1);
    expect(verdict.lines.join('\n')).toContain('critical left-pad: Remote code execution');
  });

  it('passes with only moderate or low findings, and with none', async () => {
    const judgeAudit = await load();
    const moderate = judgeAudit({
      status: 1,
      stdout: report({ 2: { module_name: 'x', severity: 'moderate', title: 't' } }, { moderate: 1 }),
    });
    expect(moderate.exitCode).toBe(0);
    expect(moderate.lines[0]).toContain('moderate 1');
    expect(judgeAudit({ status: 0, stdout: report({}, { high: 0, critical: 0 }) }).exitCode).toBe(0);
  });

  it('says so and does not fail when the registry cannot answer', async () => {
    const judgeAudit = await load();
    for (const run of [
      {
        status: 1,
        stdout: '',
        stderr: ' ERR_PNPM_AUDIT_BAD_RESPONSE  The audit endpoint responded with 405',
      },
      { status: null, error: new Error('spawnSync npx ETIMEDOUT') },
      { status: 1, stdout: 'not json' },
    ]) {
      const verdict = judgeAudit(run);
      expect(verdict.exitCode).toBe(0);
      expect(verdict.lines[0]).toMatch(/could not answer .*NOT checked/);
    }
  });
});
