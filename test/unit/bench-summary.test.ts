import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { barChartSvg } from '../../bench/bar-chart.js';
import type { BenchResult } from '../../bench/lib.js';
import { judge, readResults, summarize, summaryTable } from '../../bench/summary.js';

function result(suite: string, ratios: Record<string, number>, targets: Record<string, string>): BenchResult {
  return {
    suite,
    date: '2026-12-01T06:00:00.000Z',
    machine: { cpus: 2, model: 'test', node: 'v20', os: 'test' },
    versions: {},
    cases: [],
    ratios,
    targets,
    command: `pnpm bench ${suite}`,
  };
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bench-summary-'));
  await writeFile(join(dir, 'alpha.json'), JSON.stringify(result('alpha', { a: 2 }, { a: '>= 1' })));
  await writeFile(join(dir, 'beta.json'), JSON.stringify(result('beta', { b: 5 }, { b: '<= 1' })));
  await writeFile(join(dir, 'chart.svg'), '<svg/>');
  await writeFile(join(dir, 'broken.json'), '{ not json');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pnpm bench summary', () => {
  it('judges each target form the result files use', () => {
    expect(judge(0.9, '>= 0.8')).toBe('met');
    expect(judge(0.7, '>= 0.8')).toBe('missed');
    expect(judge(1.2, '>= 1.0 (aim 1.5)')).toBe('met');
    expect(judge(0.31, '<= 0.3')).toBe('missed');
    expect(judge(0.3, '≤ 0.3')).toBe('met');
    expect(judge(0, '0')).toBe('met');
    expect(judge(3, '0')).toBe('missed');
    expect(judge(12, 'report')).toBe('report');
    expect(judge(undefined, '>= 0.8')).toBe('not measured');
    expect(judge(Number.NaN, '>= 0.8')).toBe('not measured');
  });

  it('lists every figure of every result file, targets without a value as not measured', () => {
    const rows = summarize([
      result('x', { met: 2, untargeted: 7 }, { met: '>= 1', absent: '>= 0.8' }),
      result('y', { low: 0.1 }, { low: '>= 0.5' }),
    ]);
    expect(rows.map((row) => [row.suite, row.figure, row.verdict])).toEqual([
      ['x', 'met', 'met'],
      ['x', 'untargeted', 'report'],
      ['x', 'absent', 'not measured'],
      ['y', 'low', 'missed'],
    ]);
    const table = summaryTable(rows);
    expect(table).toMatch(/^suite\s+figure\s+value\s+target\s+status/);
    expect(table).toMatch(/y\s+low\s+0\.1\s+>= 0\.5\s+missed/);
    expect(table).toContain('1 met, 1 missed, 1 not measured, 1 reported without a target');
  });

  it('reads result files generically and skips what is not one', () => {
    expect(readResults(dir).map((entry) => entry.suite)).toEqual(['alpha', 'beta']);
    expect(readResults(dir, ['beta']).map((entry) => entry.suite)).toEqual(['beta']);
    expect(readResults(join(dir, 'missing'))).toEqual([]);
  });
});

describe('bench bar chart', () => {
  it('draws one bar per present value, a legend per series, and no NaN on a log axis', () => {
    const svg = barChartSvg({
      title: 'a <test>',
      groups: ['c1', 'c64'],
      series: [
        { name: 'unbatched', color: '#777', values: [300, 450] },
        { name: 'adaptive', color: '#17b', values: [290, undefined] },
      ],
      yLabel: 'items/s',
      log: true,
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('a &#60;test&#62;');
    // 3 bars + 2 legend swatches + the background.
    expect(svg.match(/<rect /g)).toHaveLength(6);
    expect(svg).not.toMatch(/NaN|undefined|Infinity/);
  });
});
