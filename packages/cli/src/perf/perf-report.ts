import type { MeasuredStep } from './stable-measurement.js';

/** One measured load step: what was asked and what came back. */
export interface PerfStep extends MeasuredStep {
  mode: 'concurrency' | 'rate';
  /** Concurrency (closed loop) or requests per second (rate mode). */
  load: number;
}

/** Everything `infergate perf` measured, as `--json` prints and `--json-file` writes it. */
export interface PerfReport {
  model: string;
  url: string;
  batchSize: number;
  clientBatching: boolean;
  /** The client batcher's settings (`--client-batching`). */
  batcher?: {
    flush: 'adaptive' | 'fixed';
    maxBatchSize: number;
    maxQueueDelayMs: number;
    maxInFlightBatches: number;
  };
  sharedMemory: boolean;
  windowMs: number;
  steps: PerfStep[];
}

const CSV_COLUMNS = [
  'mode',
  'load',
  'stable',
  'windows',
  'completed',
  'errors',
  'skipped',
  'throughput_per_s',
  'p50_ms',
  'p90_ms',
  'p95_ms',
  'p99_ms',
  'mean_ms',
  'client_cpu_ms_per_call',
  'server_queue_us',
  'server_compute_input_us',
  'server_compute_infer_us',
  'server_compute_output_us',
  'client_batches',
  'client_mean_batch_size',
] as const;

function cell(value: number | boolean | string | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(Number(value.toFixed(4))) : '';
  return String(value);
}

/** One header line and one line per step; numbers only, so no quoting is ever needed. */
export function perfCsv(report: PerfReport): string {
  const rows = report.steps.map((step) =>
    [
      step.mode,
      step.load,
      step.stable,
      step.windows,
      step.completed,
      step.errors,
      step.skipped,
      step.throughput,
      step.latency.p50Ms,
      step.latency.p90Ms,
      step.latency.p95Ms,
      step.latency.p99Ms,
      step.latency.meanMs,
      step.clientCpuMsPerCall,
      step.server?.queueUs,
      step.server?.computeInputUs,
      step.server?.computeInferUs,
      step.server?.computeOutputUs,
      step.clientBatches?.batches,
      step.clientBatches?.meanBatchSize,
    ]
      .map(cell)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...rows].join('\n')}\n`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** A round axis maximum: 1, 2 or 5 times a power of ten at or above `value`. */
function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((factor) => factor * power >= value) ?? 10) * power;
}

const SERIES = [
  { key: 'p50Ms', label: 'p50', color: '#1f77b4' },
  { key: 'p90Ms', label: 'p90', color: '#2ca02c' },
  { key: 'p99Ms', label: 'p99', color: '#d62728' },
] as const;

/**
 * Latency against throughput, one point per step (labelled with its load), the curve
 * perf_analyzer's users read: where latency turns up is the server's capacity.
 */
export function perfSvg(report: PerfReport): string {
  const width = 640;
  const height = 400;
  const left = 64;
  const right = 120;
  const top = 40;
  const bottom = 56;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const steps = report.steps.filter((step) => step.completed > 0);
  const xMax = niceMax(Math.max(0, ...steps.map((step) => step.throughput)));
  const yMax = niceMax(Math.max(0, ...steps.map((step) => step.latency.p99Ms)));
  const x = (value: number) => left + (value / xMax) * plotW;
  const y = (value: number) => top + plotH - (value / yMax) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="14">${escapeXml(`${report.model} @ ${report.url}: latency against throughput`)}</text>`,
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#000"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#000"/>`,
  ];
  for (let tick = 0; tick <= 4; tick++) {
    const xv = (xMax * tick) / 4;
    const yv = (yMax * tick) / 4;
    parts.push(
      `<text x="${x(xv).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${cell(xv)}</text>`,
      `<text x="${left - 6}" y="${(y(yv) + 4).toFixed(1)}" text-anchor="end">${cell(yv)}</text>`,
      `<line x1="${left}" y1="${y(yv).toFixed(1)}" x2="${left + plotW}" y2="${y(yv).toFixed(1)}" stroke="#e0e0e0"/>`,
    );
  }
  parts.push(
    `<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">throughput (inferences/s)</text>`,
    `<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">latency (ms)</text>`,
  );
  SERIES.forEach((series, index) => {
    const points = steps.map(
      (step) => `${x(step.throughput).toFixed(1)},${y(step.latency[series.key]).toFixed(1)}`,
    );
    if (points.length > 0) {
      parts.push(
        `<polyline fill="none" stroke="${series.color}" stroke-width="2" points="${points.join(' ')}"/>`,
      );
    }
    for (const point of points) {
      const [cx, cy] = point.split(',');
      parts.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${series.color}"/>`);
    }
    const legendY = top + 16 + index * 18;
    parts.push(
      `<line x1="${left + plotW + 12}" y1="${legendY - 4}" x2="${left + plotW + 32}" y2="${legendY - 4}" stroke="${series.color}" stroke-width="2"/>`,
      `<text x="${left + plotW + 38}" y="${legendY}">${series.label}</text>`,
    );
  });
  for (const step of steps) {
    const label = step.mode === 'concurrency' ? `c${step.load}` : `${cell(step.load)}/s`;
    parts.push(
      `<text x="${(x(step.throughput) + 4).toFixed(1)}" y="${(y(step.latency.p99Ms) - 6).toFixed(1)}" font-size="10" fill="#555">${escapeXml(label)}</text>`,
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
