// The report's charts, drawn as inline SVG strings (no library, no external assets).
import {
  esc,
  legend,
  linear,
  log10Scale,
  niceMax,
  niceTicks,
  plotArea,
  r,
  svgOpen,
  tickLabel,
  xAxis,
  yAxis,
} from './svg.js';

export interface Series {
  name: string;
  color: string;
  /** [x, y] points; a y of undefined breaks the line. */
  points: readonly (readonly [number, number | undefined])[];
}

/** A shaded time window (a fault in progress). */
export interface Band {
  from: number;
  to: number;
  label: string;
  color: string;
}

export interface TimeChartOptions {
  title: string;
  yTitle: string;
  xMax: number;
  series: readonly Series[];
  /** Stack the series as areas (their sum is the top line); else draw lines with dots. */
  stacked?: boolean;
  bands?: readonly Band[];
  width?: number;
  height?: number;
}

function bandsSvg(
  plot: ReturnType<typeof plotArea>,
  bands: readonly Band[],
  x: (v: number) => number,
): string {
  return bands
    .map((band, index) => {
      const x0 = x(band.from);
      const x1 = x(band.to);
      return `<rect x="${r(x0)}" y="${plot.top}" width="${r(Math.max(1, x1 - x0))}" height="${r(plot.bottom - plot.top)}" fill="${band.color}" opacity="0.14"/><text x="${r(x0 + 4)}" y="${r(plot.top + 12 + index * 13)}" fill="${band.color}" font-size="10" font-weight="600">${esc(band.label)}</text>`;
    })
    .join('');
}

/** Throughput, batch size, providers… over the run's seconds. */
export function timeChart(options: TimeChartOptions): string {
  const plot = plotArea(options.width ?? 760, options.height ?? 260);
  const x = linear([0, options.xMax], [plot.left, plot.right]);
  const stacked = options.stacked === true;
  // Stacked: each series' points become [x, lower, upper].
  const layers: { series: Series; lower: number[]; upper: number[]; xs: number[] }[] = [];
  let top = 0;
  if (stacked) {
    const base = new Map<number, number>();
    for (const series of options.series) {
      const xs: number[] = [];
      const lower: number[] = [];
      const upper: number[] = [];
      for (const [px, py] of series.points) {
        const below = base.get(px) ?? 0;
        const above = below + (py ?? 0);
        base.set(px, above);
        xs.push(px);
        lower.push(below);
        upper.push(above);
        top = Math.max(top, above);
      }
      layers.push({ series, lower, upper, xs });
    }
  } else {
    for (const series of options.series)
      for (const [, py] of series.points) if (py !== undefined) top = Math.max(top, py);
  }
  const yMax = niceMax(top);
  const y = linear([0, yMax], [plot.bottom, plot.top]);
  const parts = [svgOpen(plot, options.title)];
  parts.push(
    `<text x="${plot.left}" y="14" font-size="13" font-weight="600" fill="#1a202c">${esc(options.title)}</text>`,
  );
  parts.push(legend(plot, options.series));
  parts.push(yAxis(plot, niceTicks(0, yMax, 5), y, options.yTitle));
  parts.push(bandsSvg(plot, options.bands ?? [], x));
  if (stacked) {
    for (const layer of layers) {
      if (layer.xs.length === 0) continue;
      const upper = layer.xs.map((px, i) => `${r(x(px))},${r(y(layer.upper[i] as number))}`);
      const lower = layer.xs.map((px, i) => `${r(x(px))},${r(y(layer.lower[i] as number))}`).reverse();
      parts.push(
        `<polygon points="${[...upper, ...lower].join(' ')}" fill="${layer.series.color}" fill-opacity="0.85"><title>${esc(layer.series.name)}</title></polygon>`,
      );
    }
  } else {
    for (const series of options.series) {
      const runs: string[][] = [[]];
      for (const [px, py] of series.points) {
        if (py === undefined) runs.push([]);
        else runs[runs.length - 1]?.push(`${r(x(px))},${r(y(py))}`);
      }
      for (const run of runs) {
        if (run.length === 0) continue;
        parts.push(
          `<polyline points="${run.join(' ')}" fill="none" stroke="${series.color}" stroke-width="2" stroke-linejoin="round"><title>${esc(series.name)}</title></polyline>`,
        );
        if (run.length === 1) {
          const [cx, cy] = (run[0] as string).split(',');
          parts.push(`<circle cx="${cx}" cy="${cy}" r="2.5" fill="${series.color}"/>`);
        }
      }
    }
  }
  parts.push(xAxis(plot, niceTicks(0, options.xMax, 8), x, 'seconds since the load started'));
  parts.push('</svg>');
  return parts.join('');
}

export interface HistogramOptions {
  title: string;
  series: readonly { name: string; color: string; values: readonly number[] }[];
  /** Vertical reference lines (p50, p99 of all calls). */
  markers?: readonly { value: number; label: string }[];
  width?: number;
  height?: number;
}

/**
 * Latency distribution on a log x axis: per series, the share of its calls in each bucket, drawn as
 * a filled step outline so series of very different sizes can be compared.
 */
export function latencyHistogram(options: HistogramOptions): string {
  const plot = plotArea(options.width ?? 760, options.height ?? 280);
  const all = options.series.flatMap((series) => series.values).filter((v) => v > 0);
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const value of all) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const parts = [svgOpen(plot, options.title)];
  parts.push(
    `<text x="${plot.left}" y="14" font-size="13" font-weight="600" fill="#1a202c">${esc(options.title)}</text>`,
  );
  if (all.length === 0) {
    parts.push(`<text x="${plot.left}" y="${plot.top + 20}" fill="#718096">no successful calls</text></svg>`);
    return parts.join('');
  }
  const lo = 10 ** Math.floor(Math.log10(min));
  const hi = 10 ** Math.ceil(Math.log10(max * 1.0001));
  const binsPerDecade = 12;
  const decades = Math.round(Math.log10(hi / lo));
  const bins = decades * binsPerDecade;
  const edge = (i: number) => lo * 10 ** (i / binsPerDecade);
  const shares = options.series.map((series) => {
    const counts = new Array<number>(bins).fill(0);
    for (const value of series.values) {
      if (!(value > 0)) continue;
      const bin = Math.min(bins - 1, Math.max(0, Math.floor(Math.log10(value / lo) * binsPerDecade)));
      counts[bin] = (counts[bin] as number) + 1;
    }
    const total = series.values.length || 1;
    return counts.map((count) => (count / total) * 100);
  });
  const yMax = niceMax(Math.max(...shares.flat()));
  const x = log10Scale([lo, hi], [plot.left, plot.right]);
  const y = linear([0, yMax], [plot.bottom, plot.top]);
  parts.push(legend(plot, options.series));
  parts.push(yAxis(plot, niceTicks(0, yMax, 5), y, '% of the tenant’s calls', (v) => `${tickLabel(v)}%`));
  options.series.forEach((series, index) => {
    const share = shares[index] as number[];
    const points: string[] = [`${r(x(edge(0)))},${r(y(0))}`];
    for (let bin = 0; bin < bins; bin++) {
      const value = share[bin] as number;
      points.push(`${r(x(edge(bin)))},${r(y(value))}`, `${r(x(edge(bin + 1)))},${r(y(value))}`);
    }
    points.push(`${r(x(edge(bins)))},${r(y(0))}`);
    parts.push(
      `<polygon points="${points.join(' ')}" fill="${series.color}" fill-opacity="0.18" stroke="${series.color}" stroke-width="1.6" stroke-linejoin="round"><title>${esc(series.name)}</title></polygon>`,
    );
  });
  for (const [index, marker] of (options.markers ?? []).entries()) {
    if (!(marker.value > 0)) continue;
    const mx = r(x(marker.value));
    parts.push(
      `<line x1="${mx}" x2="${mx}" y1="${plot.top}" y2="${plot.bottom}" stroke="#1a202c" stroke-dasharray="4 3"/><text x="${mx}" y="${r(plot.top + 10 + index * 12)}" dx="4" fill="#1a202c" font-size="10">${esc(marker.label)}</text>`,
    );
  }
  const ticks: number[] = [];
  for (let decade = 0; decade <= decades; decade++)
    for (const m of [1, 2, 5]) {
      const value = lo * 10 ** decade * m;
      if (value <= hi * 1.0001) ticks.push(value);
    }
  parts.push(xAxis(plot, ticks, x, 'latency, ms (log scale)'));
  parts.push('</svg>');
  return parts.join('');
}

export interface StackedBarsOptions {
  title: string;
  /** One bar per row; segments in `segments` order. */
  rows: readonly { name: string; values: Readonly<Record<string, number>> }[];
  segments: readonly { key: string; name: string; color: string }[];
  /** Bar totals. */
  format: (value: number) => string;
  /** Axis ticks. @default format */
  tickFormat?: (value: number) => string;
  width?: number;
}

/** Horizontal stacked bars (cost by tenant, split by model). */
export function stackedBars(options: StackedBarsOptions): string {
  const rowHeight = 34;
  const height = 34 + 40 + options.rows.length * rowHeight;
  const plot = plotArea(options.width ?? 760, height, { left: 90, right: 110, top: 34, bottom: 40 });
  const totals = options.rows.map((row) =>
    options.segments.reduce((sum, s) => sum + (row.values[s.key] ?? 0), 0),
  );
  const xMax = niceMax(Math.max(...totals, 0));
  const x = linear([0, xMax], [plot.left, plot.right]);
  const parts = [svgOpen(plot, options.title)];
  parts.push(
    `<text x="8" y="14" font-size="13" font-weight="600" fill="#1a202c">${esc(options.title)}</text>`,
  );
  parts.push(legend({ ...plot, right: plot.width - 8 }, options.segments));
  for (const tick of niceTicks(0, xMax, 5)) {
    const tx = r(x(tick));
    parts.push(
      `<line x1="${tx}" x2="${tx}" y1="${plot.top}" y2="${plot.bottom}" stroke="#e2e8f0"/><text x="${tx}" y="${plot.bottom + 16}" text-anchor="middle" fill="#4a5568">${esc((options.tickFormat ?? options.format)(tick))}</text>`,
    );
  }
  options.rows.forEach((row, index) => {
    const top = plot.top + index * rowHeight + 6;
    const barHeight = rowHeight - 12;
    parts.push(
      `<text x="${plot.left - 8}" y="${r(top + barHeight / 2)}" text-anchor="end" dominant-baseline="middle" fill="#1a202c">${esc(row.name)}</text>`,
    );
    let at = 0;
    for (const segment of options.segments) {
      const value = row.values[segment.key] ?? 0;
      if (value <= 0) continue;
      const x0 = x(at);
      const x1 = x(at + value);
      parts.push(
        `<rect x="${r(x0)}" y="${r(top)}" width="${r(Math.max(0.5, x1 - x0))}" height="${barHeight}" fill="${segment.color}"><title>${esc(`${row.name} · ${segment.name}: ${options.format(value)}`)}</title></rect>`,
      );
      at += value;
    }
    parts.push(
      `<text x="${r(x(at) + 6)}" y="${r(top + barHeight / 2)}" dominant-baseline="middle" fill="#2d3748">${esc(options.format(totals[index] as number))}</text>`,
    );
  });
  parts.push(
    `<line x1="${plot.left}" x2="${plot.left}" y1="${plot.top}" y2="${plot.bottom}" stroke="#a0aec0"/>`,
  );
  parts.push(
    `<text x="${r((plot.left + plot.right) / 2)}" y="${plot.height - 6}" text-anchor="middle" fill="#2d3748">USD</text>`,
  );
  parts.push('</svg>');
  return parts.join('');
}

export interface LaneOptions {
  title: string;
  xMax: number;
  lanes: readonly string[];
  spans: readonly { lane: string; from: number; to: number; color: string; label: string }[];
  key: readonly { name: string; color: string }[];
  width?: number;
}

/** One lane per breaker: when it was open or half-open. */
export function laneChart(options: LaneOptions): string {
  const laneHeight = 22;
  const height = 34 + 40 + options.lanes.length * laneHeight;
  const plot = plotArea(options.width ?? 760, height, { left: 90, right: 16, top: 34, bottom: 40 });
  const x = linear([0, options.xMax], [plot.left, plot.right]);
  const parts = [svgOpen(plot, options.title)];
  parts.push(
    `<text x="8" y="14" font-size="13" font-weight="600" fill="#1a202c">${esc(options.title)}</text>`,
  );
  parts.push(legend(plot, options.key));
  options.lanes.forEach((lane, index) => {
    const top = plot.top + index * laneHeight;
    parts.push(
      `<rect x="${plot.left}" y="${top + 4}" width="${r(plot.right - plot.left)}" height="${laneHeight - 8}" fill="#c6f6d5"/><text x="${plot.left - 8}" y="${top + laneHeight / 2}" text-anchor="end" dominant-baseline="middle" fill="#1a202c">${esc(lane)}</text>`,
    );
    for (const span of options.spans.filter((s) => s.lane === lane)) {
      const x0 = x(span.from);
      const x1 = x(Math.min(options.xMax, span.to));
      parts.push(
        `<rect x="${r(x0)}" y="${top + 4}" width="${r(Math.max(1.5, x1 - x0))}" height="${laneHeight - 8}" fill="${span.color}"><title>${esc(`${lane}: ${span.label} ${span.from.toFixed(2)}–${span.to.toFixed(2)} s`)}</title></rect>`,
      );
    }
  });
  parts.push(xAxis(plot, niceTicks(0, options.xMax, 8), x, 'seconds since the load started'));
  parts.push('</svg>');
  return parts.join('');
}
