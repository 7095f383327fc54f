// The self-contained HTML report: inline CSS and SVG only, no scripts, fonts or links to fetch.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Band, laneChart, latencyHistogram, type Series, stackedBars, timeChart } from './charts.js';
import { fixed, int, ms, usd } from './format.js';
import type { Recorder, TimePoint } from './metrics.js';
import { type DemoSummary, TRITON_COLUMNS, tritonRows, tritonTotals } from './summary.js';
import { esc, tickLabel } from './svg.js';

const BAND_COLORS = ['#c53030', '#b7791f', '#6b46c1'];
const ENDPOINT_COLORS = ['#2b6cb0', '#805ad5', '#319795'];
const PROVIDER_COLORS: Record<string, string> = {
  triton: '#76b900',
  openai: '#10a37f',
  anthropic: '#d97757',
};
const COST_COLORS = ['#553c9a', '#b7791f', '#2c7a7b', '#c53030', '#718096', '#2f855a'];

/** Fault windows from the fault/recover event pairs. */
function faultBands(summary: DemoSummary, end: number): Band[] {
  const bands: Band[] = [];
  const open = new Map<string, number>();
  for (const event of summary.events) {
    if (event.window === undefined) continue;
    if (event.kind === 'fault') open.set(event.window, event.t);
    else if (event.kind === 'recover') {
      const from = open.get(event.window);
      if (from === undefined) continue;
      open.delete(event.window);
      bands.push({ from, to: event.t, label: event.window, color: '' });
    }
  }
  for (const [label, from] of open) bands.push({ from, to: end, label, color: '' });
  return bands
    .sort((a, b) => a.from - b.from)
    .map((band, index) => ({ ...band, color: BAND_COLORS[index % BAND_COLORS.length] as string }));
}

/**
 * Chat answers per second by provider in one-second bins: answers counted by the ticks whose centre
 * falls in the bin, divided by the time those ticks cover (a late tick, after an event-loop stall,
 * is spread rather than leaving an empty bin). Bins without ticks are left out.
 */
function secondBins(timeline: readonly TimePoint[], providers: readonly string[]) {
  const bins = new Map<number, { span: number; counts: Record<string, number> }>();
  let previous = 0;
  for (const point of timeline) {
    const span = point.t - previous;
    const index = Math.max(0, Math.floor(previous + span / 2));
    previous = point.t;
    const bin = bins.get(index) ?? { span: 0, counts: {} };
    bin.span += span;
    for (const provider of providers)
      bin.counts[provider] = (bin.counts[provider] ?? 0) + (point.chatBy[provider] ?? 0);
    bins.set(index, bin);
  }
  return [...bins.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, bin]) => ({
      t: index + 0.5,
      perS: Object.fromEntries(providers.map((p) => [p, (bin.counts[p] ?? 0) / Math.max(bin.span, 1e-3)])),
    }));
}

function kpi(label: string, value: string, note = ''): string {
  return `<div class="kpi"><div class="v">${esc(value)}</div><div class="l">${esc(label)}</div>${note === '' ? '' : `<div class="n">${esc(note)}</div>`}</div>`;
}

function htmlTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  footer?: readonly string[],
): string {
  const cells = (row: readonly string[], tag: string) =>
    `<tr>${row.map((cell, index) => `<${tag}${index === 0 ? ' class="l"' : ''}>${esc(cell)}</${tag}>`).join('')}</tr>`;
  return `<table><thead>${cells(head, 'th')}</thead><tbody>${rows.map((row) => cells(row, 'td')).join('')}</tbody>${
    footer === undefined ? '' : `<tfoot>${cells(footer, 'td')}</tfoot>`
  }</table>`;
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a202c;background:#f7fafc;margin:0}
main{max-width:820px;margin:0 auto;padding:24px 24px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#4a5568;margin:0 0 16px}
pre{background:#edf2f7;padding:10px 12px;border-radius:6px;overflow-x:auto;font-size:12px}
.kpis{display:grid;grid-template-columns:repeat(3,1fr);gap:10px;margin:16px 0}
.kpi{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:10px 12px}
.kpi .v{font-size:20px;font-weight:650}.kpi .l{color:#4a5568;font-size:12px}.kpi .n{color:#718096;font-size:11px}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px;margin:6px 0}
th,td{padding:5px 8px;border-bottom:1px solid #e2e8f0;text-align:right;white-space:nowrap}
th{background:#edf2f7;font-weight:600}.l{text-align:left}tfoot td{font-weight:600}
figure{margin:14px 0;background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:10px}
figure svg{max-width:100%;height:auto;display:block}
figcaption{color:#4a5568;font-size:12px;margin-top:6px}
.ev td:nth-child(2){text-align:left;white-space:normal}
.fault{color:#c53030}.recover{color:#2f855a}.breaker{color:#b7791f}.budget{color:#6b46c1}
`;

export function renderReport(summary: DemoSummary, recorder: Recorder): string {
  const end = Math.max(summary.durationS, recorder.timeline.at(-1)?.t ?? 0);
  const xMax = end;
  const bands = faultBands(summary, end);
  const timeline = recorder.timeline;
  const tenants = summary.tenants;

  const throughput: Series[] = tenants.map((tenant) => ({
    name: tenant.name,
    color: tenant.color,
    points: timeline.map((p) => [p.t, p.itemsPerS[tenant.name] ?? 0] as const),
  }));
  const batchSeries: Series[] = summary.endpoints.map((endpoint, index) => ({
    name: endpoint.name,
    color: ENDPOINT_COLORS[index % ENDPOINT_COLORS.length] as string,
    points: timeline.map((p) => [p.t, p.batchSize[endpoint.name]] as const),
  }));
  // A few chats per tick: one-second bins read better than 250 ms ones.
  const chatBins = secondBins(timeline, summary.providers);
  const chatSeries: Series[] = summary.providers.map((provider) => ({
    name: provider,
    color: PROVIDER_COLORS[provider] ?? '#718096',
    // Steps, not slopes: each one-second bin is flat (the ends differ by a hair so stacking keys stay apart).
    points: chatBins.flatMap((bin) => {
      const value = bin.perS[provider] ?? 0;
      return [[bin.t - 0.5, value] as const, [Math.min(xMax, bin.t + 0.5 - 1e-6), value] as const];
    }),
  }));
  const lanes = [...summary.endpoints.map((e) => e.name), ...summary.chatTargets.map((t) => t.name)];
  const spans = recorder.breakerSpans.map((span) => ({
    lane: span.target,
    from: span.from,
    to: span.to ?? end,
    color: span.state === 'open' ? '#e53e3e' : '#ecc94b',
    label: span.state,
  }));
  const costSegments = summary.costModels.map((model, index) => ({
    key: model,
    name: model === summary.model ? `${model} (GPU time)` : model,
    color: COST_COLORS[index % COST_COLORS.length] as string,
  }));

  const total = tritonTotals(summary);
  const batches = summary.endpoints.reduce((a, e) => a + e.batches, 0);
  const batchRows = summary.endpoints.reduce((a, e) => a + e.rows, 0);
  const trips = Object.values(summary.trips).reduce((a, b) => a + b, 0);

  const rows = tritonRows(summary);
  const tritonTable = htmlTable(TRITON_COLUMNS, rows.slice(0, -1), rows.at(-1));
  const chatTable = htmlTable(
    ['tenant', 'chats', 'ok', 'failed', 'p50 ms', 'p99 ms', ...summary.providers],
    tenants.map((t) => [
      t.name,
      int(t.chats),
      int(t.chatOk),
      int(t.chatFailed),
      ms(t.chatP50Ms),
      ms(t.chatP99Ms),
      ...summary.providers.map((provider) => int(t.chatBy[provider] ?? 0)),
    ]),
  );
  const costTable = htmlTable(
    ['tenant', ...costSegments.map((s) => s.name), 'total'],
    tenants.map((t) => [
      t.name,
      ...summary.costModels.map((model) => usd(t.usdByModel[model] ?? 0)),
      usd(t.gpuUsd + t.llmUsd),
    ]),
    [
      'all',
      ...summary.costModels.map((model) => usd(tenants.reduce((a, t) => a + (t.usdByModel[model] ?? 0), 0))),
      usd(summary.totalUsd),
    ],
  );
  const endpointTable = htmlTable(
    ['endpoint', 'what', '$/GPU-h', 'batches', 'rows', 'mean batch', 'rejected'],
    summary.endpoints.map((e) => [
      e.name,
      e.label,
      fixed(e.usdPerGpuHour, 2),
      int(e.batches),
      int(e.rows),
      fixed(e.meanBatchSize),
      Object.entries(e.rejections)
        .map(([code, n]) => `${code} ${n}`)
        .join(', ') || '0',
    ]),
  );
  const events = `<table class="ev"><thead><tr><th>t, s</th><th class="l">event</th></tr></thead><tbody>${summary.events
    .map(
      (event) => `<tr class="${event.kind}"><td>${event.t.toFixed(2)}</td><td>${esc(event.text)}</td></tr>`,
    )
    .join('')}</tbody></table>`;

  const failures = Object.entries(summary.failures.triton)
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code} ${int(n)}`)
    .join(', ');

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>infergate demo — ${esc(summary.startedAt.toISOString())}</title><style>${CSS}</style></head>
<body><main>
<h1>infergate demo</h1>
<p class="sub">${esc(summary.startedAt.toISOString())} · ${fixed(summary.durationS, 0)} s of load · ${
    summary.mode === 'embedded'
      ? 'embedded reference servers and fake LLM providers'
      : 'a real Triton and fake LLM providers'
  } · ${tenants.length} tenants</p>
<pre>${esc(summary.setup.join('\n'))}</pre>
<div class="kpis">
${kpi('items/s (all tenants)', fixed(total.rows / summary.durationS, 0), `${int(total.rows)} rows in ${int(total.calls)} calls`)}
${kpi('p50 / p99 latency', `${ms(summary.p50Ms)} / ${ms(summary.p99Ms)} ms`, 'Triton calls, end to end')}
${kpi('mean batch size', fixed(batches === 0 ? 0 : batchRows / batches), `${int(batches)} batches`)}
${kpi('Triton calls lost', int(total.failed), "failed for any reason, the primary's crash included")}
${kpi('fallbacks', int(summary.fallbacks.triton + summary.fallbacks.chat), `Triton ${int(summary.fallbacks.triton)} · chat ${int(summary.fallbacks.chat)}`)}
${kpi(
  'breaker trips',
  int(trips),
  Object.entries(summary.trips)
    .map(([t, n]) => `${t} ${n}`)
    .join(' · ') || 'none',
)}
${kpi('cost, all tenants', usd(summary.totalUsd), 'GPU time + LLM tokens')}
</div>

<h2>Triton inference</h2>
<p>Each call: <code>TritonClient</code> → router (fallback ${esc(summary.endpoints.map((e) => e.name).join(' → '))}, circuit breakers) → cost interceptor (GPU time to the tenant) → micro-batcher (per-tenant fair batches) → gRPC.${
    summary.checked ? ` Every answer was checked row by row: ${int(summary.mismatches)} wrong rows.` : ''
  }</p>
${tritonTable}
<p class="sub">Items: rows answered. Shed: calls not sent because the tenant already had its cap of calls in flight (every queue in the demo is bounded). Failed calls: ${esc(failures || 'none')}.</p>
${endpointTable}
<figure>${timeChart({ title: `Throughput by tenant — ${int(total.failed)} Triton calls lost`, yTitle: 'items/s', xMax, series: throughput, stacked: true, bands })}
<figcaption>Successful items per second, stacked by tenant; shaded: injected faults.</figcaption></figure>
<figure>${timeChart({ title: 'Batch size over time', yTitle: 'rows per batch', xMax, series: batchSeries, bands })}
<figcaption>Mean rows per batch sent to each endpoint, per quarter second. The secondary gets traffic only while the primary is down; the dots near zero are single calls let through to the dead primary while its breaker was half-open.</figcaption></figure>
<figure>${latencyHistogram({
    title: 'Latency distribution by tenant',
    series: tenants.map((t) => ({
      name: t.name,
      color: t.color,
      values: recorder.tenants.get(t.name)?.triton.latencies.values ?? [],
    })),
    markers: [
      { value: summary.p50Ms, label: `p50 ${ms(summary.p50Ms)} ms` },
      { value: summary.p99Ms, label: `p99 ${ms(summary.p99Ms)} ms` },
    ],
  })}
<figcaption>Successful Triton calls, end to end. Each tenant's curve is a share of its own calls, so a small tenant is as visible as the flood.</figcaption></figure>
<figure>${laneChart({
    title: 'Circuit breakers',
    xMax,
    lanes,
    spans,
    key: [
      { name: 'closed', color: '#c6f6d5' },
      { name: 'half-open', color: '#ecc94b' },
      { name: 'open', color: '#e53e3e' },
    ],
  })}
<figcaption>Triton endpoints and chat targets; an open breaker is skipped by the router until a probe (half-open) succeeds.</figcaption></figure>

<h2>LLM chat</h2>
<p>Chat router ${esc(summary.chatTargets.map((t) => `${t.name} (${t.model})`).join(' → '))}; every target wrapped in <code>withCost</code>.</p>
${chatTable}
<figure>${timeChart({ title: 'Chat answers by provider', yTitle: 'answers/s', xMax, series: chatSeries, stacked: true, bands })}
<figcaption>Which backend answered: the Triton-hosted LLM while its server is up, then OpenAI, then Anthropic while OpenAI is rate limited.</figcaption></figure>

<h2>Cost</h2>
<p>GPU time is charged per tenant from Triton's statistics (compute time per row × the tenant's rows) at each endpoint's GPU-hour price; LLM calls by their token usage at list prices (the self-hosted model at an assumed internal price).</p>
${costTable}
<figure>${stackedBars({
    title: 'Cost by tenant',
    rows: tenants.map((t) => ({ name: t.name, values: t.usdByModel })),
    segments: costSegments,
    format: (value) => usd(value),
    tickFormat: (value) => `$${tickLabel(value)}`,
  })}
<figcaption>USD for this run, split by what was paid for.</figcaption></figure>

<h2>Events</h2>
${events}
<p class="sub">Tenants: ${tenants.map((t) => `${esc(t.name)} — ${esc(t.description)}`).join('; ')}.</p>
</main></body></html>
`;
}

/** Writes the report to `<dir>/demo-<timestamp>.html`; returns the path. */
export async function writeReport(dir: string, summary: DemoSummary, recorder: Recorder): Promise<string> {
  await mkdir(dir, { recursive: true });
  const stamp = summary.startedAt.toISOString().replace(/[:.]/g, '-');
  const path = resolve(join(dir, `demo-${stamp}.html`));
  await writeFile(path, renderReport(summary, recorder), 'utf8');
  return path;
}
