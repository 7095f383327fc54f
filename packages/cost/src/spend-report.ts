import { type BudgetStore, type DailySpend, utcDay } from './budget-store.js';

export type ReportDimension = 'day' | 'tenant' | 'key' | 'model' | 'provider';

export interface ReportQuery {
  /** First UTC day (YYYY-MM-DD or a Date). @default 30 days before `to` */
  from?: string | Date;
  /** Last UTC day, inclusive. @default today */
  to?: string | Date;
  /** Columns rows are grouped by. @default ['day', 'tenant', 'model'] */
  groupBy?: readonly ReportDimension[];
  /** Only rows of this tenant. */
  tenant?: string;
}

export interface SpendReportRow {
  day?: string;
  tenant?: string;
  key?: string;
  model?: string;
  provider?: string;
  costUsd: number;
  calls: number;
  unpricedCalls: number;
  inputTokens: number;
  outputTokens: number;
}

export interface SpendReport {
  from: string;
  to: string;
  groupBy: readonly ReportDimension[];
  rows: SpendReportRow[];
  totalUsd: number;
}

function day(value: string | Date): string {
  return typeof value === 'string' ? value : utcDay(value.getTime());
}

/** Groups the store's daily aggregates; rows sorted by the grouping columns. */
export async function buildReport(store: BudgetStore, query: ReportQuery, now: number): Promise<SpendReport> {
  const to = day(query.to ?? new Date(now));
  const from = day(query.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000));
  const groupBy = query.groupBy ?? ['day', 'tenant', 'model'];
  const daily: DailySpend[] = await store.daily(from, to);
  const groups = new Map<string, SpendReportRow>();
  let totalUsd = 0;
  for (const item of daily) {
    if (query.tenant !== undefined && item.tenant !== query.tenant) continue;
    const id = groupBy.map((dimension) => item[dimension]).join('\t');
    let row = groups.get(id);
    if (!row) {
      row = { costUsd: 0, calls: 0, unpricedCalls: 0, inputTokens: 0, outputTokens: 0 };
      for (const dimension of groupBy) row[dimension] = item[dimension];
      groups.set(id, row);
    }
    row.costUsd += item.costUsd;
    row.calls += item.calls;
    row.unpricedCalls += item.unpricedCalls;
    row.inputTokens += item.inputTokens;
    row.outputTokens += item.outputTokens;
    totalUsd += item.costUsd;
  }
  const rows = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  return { from, to, groupBy, rows, totalUsd };
}

function csvField(value: string | number | undefined): string {
  const text = value === undefined ? '' : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const METRICS = ['costUsd', 'calls', 'unpricedCalls', 'inputTokens', 'outputTokens'] as const;

/** RFC 4180 CSV: the grouping columns, then cost and counts; one line per row. */
export function reportToCsv(report: SpendReport): string {
  const header = [...report.groupBy, ...METRICS];
  const lines = [header.join(',')];
  for (const row of report.rows)
    lines.push(
      [
        ...report.groupBy.map((dimension) => csvField(row[dimension])),
        ...METRICS.map((name) => csvField(row[name])),
      ].join(','),
    );
  return `${lines.join('\r\n')}\r\n`;
}

/** Pretty JSON of the report (the report object itself is plain data). */
export function reportToJson(report: SpendReport): string {
  return JSON.stringify(report, null, 2);
}
