// The run's results as one data object (shared by the terminal summary and the HTML report), and
// the terminal rendering of it.
import type { SpendReport } from '@infergate/cost';
import type { DemoEnvironment } from './environment.js';
import { fixed, int, ms, table, usd } from './format.js';
import { type DemoEvent, quantile, type Recorder } from './metrics.js';
import type { TenantSpec } from './tenants.js';

export interface TenantSummary {
  name: string;
  pattern: string;
  description: string;
  color: string;
  calls: number;
  ok: number;
  rows: number;
  itemsPerS: number;
  p50Ms: number;
  p99Ms: number;
  shed: number;
  failed: number;
  chats: number;
  chatOk: number;
  chatFailed: number;
  chatP50Ms: number;
  chatP99Ms: number;
  /** Successful chats by the provider that answered. */
  chatBy: Record<string, number>;
  gpuUsd: number;
  llmUsd: number;
  /** Cost by model ("simulated_gpu", "gpt-4o-mini", …). */
  usdByModel: Record<string, number>;
}

export interface EndpointSummary {
  name: string;
  label: string;
  usdPerGpuHour: number;
  batches: number;
  rows: number;
  meanBatchSize: number;
  rejections: Record<string, number>;
}

export interface DemoSummary {
  mode: DemoEnvironment['mode'];
  model: string;
  startedAt: Date;
  durationS: number;
  setup: string[];
  tenants: TenantSummary[];
  endpoints: EndpointSummary[];
  chatTargets: { name: string; model: string; provider: string }[];
  /** Providers seen answering chats, in route order. */
  providers: string[];
  fallbacks: { triton: number; chat: number };
  trips: Record<string, number>;
  /** Failed calls by error code (Triton and chat). */
  failures: { triton: Record<string, number>; chat: Record<string, number> };
  /** Percentiles over every tenant's successful Triton calls. */
  p50Ms: number;
  p99Ms: number;
  mismatches: number;
  checked: boolean;
  totalUsd: number;
  /** Models in the cost report, GPU model first. */
  costModels: string[];
  events: DemoEvent[];
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function addCodes(into: Record<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [code, count] of from) into[code] = (into[code] ?? 0) + count;
}

export function summarize(input: {
  env: DemoEnvironment;
  tenants: readonly TenantSpec[];
  recorder: Recorder;
  report: SpendReport;
  durationS: number;
  startedAt: Date;
}): DemoSummary {
  const { env, recorder, report, durationS } = input;
  const gpuModel = env.inputs.model;
  const failures = { triton: {} as Record<string, number>, chat: {} as Record<string, number> };
  const tenants = input.tenants.map((spec): TenantSummary => {
    const stats = recorder.tenants.get(spec.name);
    if (stats === undefined) throw new Error(`no stats for ${spec.name}`);
    addCodes(failures.triton, stats.triton.errors);
    addCodes(failures.chat, stats.chat.errors);
    const usdByModel: Record<string, number> = {};
    for (const row of report.rows) {
      if (row.tenant !== spec.name || row.model === undefined) continue;
      usdByModel[row.model] = (usdByModel[row.model] ?? 0) + row.costUsd;
    }
    const gpuUsd = usdByModel[gpuModel] ?? 0;
    return {
      name: spec.name,
      pattern: spec.pattern,
      description: spec.description,
      color: spec.color,
      calls: stats.triton.calls,
      ok: stats.triton.ok,
      rows: stats.rows,
      itemsPerS: stats.rows / durationS,
      p50Ms: quantile(stats.triton.latencies.values, 0.5),
      p99Ms: quantile(stats.triton.latencies.values, 0.99),
      shed: stats.triton.shed,
      failed: sum([...stats.triton.errors.values()]),
      chats: stats.chat.calls,
      chatOk: stats.chat.ok,
      chatFailed: sum([...stats.chat.errors.values()]),
      chatP50Ms: quantile(stats.chat.latencies.values, 0.5),
      chatP99Ms: quantile(stats.chat.latencies.values, 0.99),
      chatBy: Object.fromEntries(stats.chatBy),
      gpuUsd,
      llmUsd: sum(Object.values(usdByModel)) - gpuUsd,
      usdByModel,
    };
  });
  const endpoints = env.endpoints.map((target): EndpointSummary => {
    const stats = target.batcher.stats();
    return {
      name: target.name,
      label: target.label,
      usdPerGpuHour: target.usdPerGpuHour,
      batches: stats.batches,
      rows: stats.rows,
      meanBatchSize: stats.meanBatchSize,
      rejections: { ...stats.rejections },
    };
  });
  const models = new Set(report.rows.map((row) => row.model ?? '?'));
  models.delete(gpuModel);
  const allLatencies = input.tenants.flatMap(
    (spec) => recorder.tenants.get(spec.name)?.triton.latencies.values ?? [],
  );
  const routed = env.chatTargets.map((target) => target.provider);
  const seen = new Set(tenants.flatMap((tenant) => Object.keys(tenant.chatBy)));
  return {
    mode: env.mode,
    model: gpuModel,
    startedAt: input.startedAt,
    durationS,
    setup: env.setup,
    tenants,
    endpoints,
    chatTargets: env.chatTargets,
    providers: [...routed, ...[...seen].filter((provider) => !routed.includes(provider))],
    fallbacks: { ...recorder.fallbacks },
    trips: Object.fromEntries(recorder.trips),
    failures,
    p50Ms: quantile(allLatencies, 0.5),
    p99Ms: quantile(allLatencies, 0.99),
    mismatches: recorder.mismatches,
    checked: gpuModel === 'simulated_gpu',
    totalUsd: report.totalUsd,
    // GPU time first, then the chat models in route order, then anything else.
    costModels: [
      gpuModel,
      ...env.chatTargets.map((target) => target.model).filter((model) => models.delete(model)),
      ...[...models].sort(),
    ],
    events: recorder.events,
  };
}

function codes(record: Record<string, number>): string {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([code, count]) => `${code} ${int(count)}`).join(', ');
}

/** Wraps "label  text" so continuation lines line up under the text. */
function labelled(label: string, parts: readonly string[], width = 79): string[] {
  const lines: string[] = [];
  let line = `  ${label.padEnd(9)} `;
  const indent = ' '.repeat(line.length);
  for (const [index, part] of parts.entries()) {
    const piece = index === parts.length - 1 ? part : `${part} ·`;
    if (line.trim().length > label.length && line.length + piece.length + 1 > width) {
      lines.push(line.trimEnd());
      line = indent;
    }
    line += `${line.endsWith(' ') ? '' : ' '}${piece}`;
  }
  lines.push(line.trimEnd());
  return lines;
}

/** The terminal summary, every line within 79 columns. */
/** Calls, rows, shed and failed Triton calls over every tenant. */
export function tritonTotals(summary: DemoSummary) {
  const { tenants } = summary;
  return {
    calls: sum(tenants.map((t) => t.calls)),
    rows: sum(tenants.map((t) => t.rows)),
    shed: sum(tenants.map((t) => t.shed)),
    failed: sum(tenants.map((t) => t.failed)),
  };
}

export const TRITON_COLUMNS = ['tenant', 'load', 'calls', 'items/s', 'p50 ms', 'p99 ms', 'shed', 'failed'];

/** The Triton table's rows (one per tenant, then 'all'), as the terminal and the HTML report show them. */
export function tritonRows(summary: DemoSummary): string[][] {
  const all = tritonTotals(summary);
  return [
    ...summary.tenants.map((t) => [
      t.name,
      t.pattern,
      int(t.calls),
      fixed(t.itemsPerS),
      ms(t.p50Ms),
      ms(t.p99Ms),
      int(t.shed),
      int(t.failed),
    ]),
    [
      'all',
      '',
      int(all.calls),
      fixed(all.rows / summary.durationS),
      ms(summary.p50Ms),
      ms(summary.p99Ms),
      int(all.shed),
      int(all.failed),
    ],
  ];
}

export function renderSummary(summary: DemoSummary): string[] {
  const { tenants } = summary;
  const lines: string[] = [];
  lines.push('', `Triton inference — ${summary.model}  (router → cost → batcher → Triton)`);
  lines.push(
    ...table(
      TRITON_COLUMNS.map((title, index) => (index < 2 ? { title, align: 'left' as const } : { title })),
      tritonRows(summary),
    ),
  );
  lines.push('  (items = rows answered; shed = not sent, the tenant had its cap in flight)', '');
  lines.push(
    ...labelled(
      'batching',
      summary.endpoints.map(
        (e) => `${e.name}: ${int(e.batches)} batches, mean ${fixed(e.meanBatchSize)} rows`,
      ),
    ),
  );
  const trips = Object.entries(summary.trips);
  lines.push(
    ...labelled('routing', [
      `fallbacks: Triton ${int(summary.fallbacks.triton)}, chat ${int(summary.fallbacks.chat)}`,
      `Triton calls lost: ${int(tritonTotals(summary).failed)} (the primary's crash included)`,
      `breaker trips: ${trips.length === 0 ? 'none' : trips.map(([target, n]) => `${target} ${n}`).join(', ')}`,
    ]),
  );
  lines.push(...labelled('failed', [`Triton: ${codes(summary.failures.triton)}`]));
  if (summary.checked)
    lines.push(...labelled('checked', [`every answer row by row: ${int(summary.mismatches)} wrong rows`]));

  const route = summary.chatTargets.map((t) => t.name).join(' → ');
  lines.push('', `LLM chat  (chat router: ${route}; withCost)`);
  lines.push(
    ...table(
      [
        { title: 'tenant', align: 'left' },
        { title: 'chats' },
        { title: 'ok' },
        { title: 'failed' },
        { title: 'p50 ms' },
        { title: 'p99 ms' },
        ...summary.providers.map((provider) => ({ title: provider })),
      ],
      tenants.map((t) => [
        t.name,
        int(t.chats),
        int(t.chatOk),
        int(t.chatFailed),
        ms(t.chatP50Ms),
        ms(t.chatP99Ms),
        ...summary.providers.map((provider) => int(t.chatBy[provider] ?? 0)),
      ]),
    ),
  );
  if (Object.keys(summary.failures.chat).length > 0)
    lines.push(...labelled('failed', [`chat: ${codes(summary.failures.chat)}`]));

  lines.push('', 'Cost by tenant, USD  (GPU time × $/GPU-h; LLM tokens × price list)');
  lines.push(
    ...table(
      [
        { title: 'tenant', align: 'left' },
        { title: 'GPU time' },
        { title: 'LLM tokens' },
        { title: 'total' },
      ],
      [
        ...tenants.map((t) => [t.name, usd(t.gpuUsd), usd(t.llmUsd), usd(t.gpuUsd + t.llmUsd)]),
        [
          'all',
          usd(sum(tenants.map((t) => t.gpuUsd))),
          usd(sum(tenants.map((t) => t.llmUsd))),
          usd(summary.totalUsd),
        ],
      ],
    ),
  );
  return lines;
}
