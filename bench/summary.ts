// The summary `pnpm bench` prints at the end: every named figure of every result file against its
// target. Read generically from bench/results/<suite>.json (`ratios` and `targets`), so a new suite's
// figures appear without any edit here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './lib.js';

export type Verdict = 'met' | 'missed' | 'report' | 'not measured';

export interface SummaryRow {
  suite: string;
  figure: string;
  value: number | undefined;
  target: string;
  verdict: Verdict;
  /** When the suite's result file was written. */
  date: string;
}

const OPERATORS: Record<string, (value: number, bound: number) => boolean> = {
  '>=': (value, bound) => value >= bound,
  '≥': (value, bound) => value >= bound,
  '<=': (value, bound) => value <= bound,
  '≤': (value, bound) => value <= bound,
  '>': (value, bound) => value > bound,
  '<': (value, bound) => value < bound,
  '==': (value, bound) => value === bound,
  '=': (value, bound) => value === bound,
};

/**
 * Judges `value` against a target as the result files write them: an operator and a number first
 * (`>= 0.8`, `<= 50 (ms)`, `≥ 1.0 (aim 1.5)`), a bare number for equality (`0`), anything else
 * (`report`) for a figure without a threshold.
 */
export function judge(value: number | undefined, target: string | undefined): Verdict {
  const match = /^\s*(>=|<=|≥|≤|==|=|>|<)?\s*(-?\d+(?:\.\d+)?)/.exec(target ?? '');
  if (match === null) return value === undefined ? 'not measured' : 'report';
  if (value === undefined || !Number.isFinite(value)) return 'not measured';
  const compare = OPERATORS[match[1] ?? '=='] as (value: number, bound: number) => boolean;
  return compare(value, Number(match[2])) ? 'met' : 'missed';
}

/** One row per figure named in `ratios` or `targets`, in the file's order. */
export function summarize(results: readonly BenchResult[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const result of results) {
    const figures = [...new Set([...Object.keys(result.ratios ?? {}), ...Object.keys(result.targets ?? {})])];
    for (const figure of figures) {
      const raw = result.ratios?.[figure];
      const value = typeof raw === 'number' ? raw : undefined;
      const target = result.targets?.[figure] ?? 'report';
      rows.push({
        suite: result.suite,
        figure,
        value,
        target,
        verdict: judge(value, target),
        date: result.date,
      });
    }
  }
  return rows;
}

/** The result files in `dir` (every `*.json` with a `suite` and `ratios`), or only those of `suites`. */
export function readResults(dir: string, suites?: readonly string[]): BenchResult[] {
  if (!existsSync(dir)) return [];
  const results: BenchResult[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.json')) continue;
    if (suites !== undefined && !suites.includes(file.slice(0, -5))) continue;
    try {
      const parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Partial<BenchResult>;
      if (typeof parsed.suite === 'string' && typeof parsed.ratios === 'object')
        results.push(parsed as BenchResult);
    } catch {
      // Not a result file (or a broken one): the summary lists what it can read.
    }
  }
  return results;
}

function shown(value: number | undefined): string {
  if (value === undefined) return '—';
  const digits = Math.abs(value) >= 100 ? 1 : 3;
  return String(Math.round(value * 10 ** digits) / 10 ** digits);
}

/** A plain-text table, one line per figure, and a count of met and missed. */
export function summaryTable(rows: readonly SummaryRow[]): string {
  const table = [
    ['suite', 'figure', 'value', 'target', 'status', 'run'],
    ...rows.map((row) => [
      row.suite,
      row.figure,
      shown(row.value),
      row.target,
      row.verdict,
      row.date.slice(0, 16).replace('T', ' '),
    ]),
  ];
  const widths =
    table[0]?.map((_, column) => Math.max(...table.map((line) => (line[column] ?? '').length))) ?? [];
  const lines = table.map((line) =>
    line
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('  '));
  const count = (verdict: Verdict) => rows.filter((row) => row.verdict === verdict).length;
  lines.push(
    '',
    `${count('met')} met, ${count('missed')} missed, ${count('not measured')} not measured, ${count('report')} reported without a target`,
  );
  return lines.join('\n');
}
