// Small SVG helpers for the report's charts: escaping, scales, "nice" ticks, axes, legends.

export function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Rounds for SVG attributes (keeps the file small). */
export function r(value: number): string {
  return String(Math.round(value * 10) / 10);
}

export type Scale = (value: number) => number;

export function linear(domain: readonly [number, number], range: readonly [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

export function log10Scale(domain: readonly [number, number], range: readonly [number, number]): Scale {
  const scale = linear([Math.log10(domain[0]), Math.log10(domain[1])], range);
  return (value) => scale(Math.log10(value));
}

/** About `count` round tick values covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let value = Math.ceil(min / step) * step; value <= max + step * 1e-9; value += step)
    ticks.push(Math.round(value / step) * step);
  return ticks;
}

/** The smallest "nice" value at or above `max` (axis top). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const ticks = niceTicks(0, max, 5);
  const step = (ticks[1] ?? max) - (ticks[0] ?? 0);
  return Math.ceil(max / step - 1e-9) * step;
}

export function tickLabel(value: number): string {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1_000_000) return `${+(value / 1_000_000).toFixed(1)}M`;
  if (abs >= 10_000) return `${+(value / 1000).toFixed(0)}k`;
  if (abs >= 1000) return `${+(value / 1000).toFixed(1)}k`;
  if (abs >= 1) return String(+value.toFixed(2));
  return String(+value.toPrecision(2));
}

export interface Plot {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The drawing area inside the margins. */
export function plotArea(
  width: number,
  height: number,
  margin = { left: 56, right: 16, top: 34, bottom: 40 },
): Plot {
  return {
    width,
    height,
    left: margin.left,
    right: width - margin.right,
    top: margin.top,
    bottom: height - margin.bottom,
  };
}

export function svgOpen(plot: Plot, label: string): string {
  return `<svg viewBox="0 0 ${plot.width} ${plot.height}" width="${plot.width}" height="${plot.height}" role="img" aria-label="${esc(label)}" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="11">`;
}

export function yAxis(
  plot: Plot,
  ticks: readonly number[],
  scale: Scale,
  title: string,
  format = tickLabel,
): string {
  const parts = ticks.map((tick) => {
    const y = r(scale(tick));
    return `<line x1="${plot.left}" x2="${plot.right}" y1="${y}" y2="${y}" stroke="#e2e8f0"/><text x="${plot.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="#4a5568">${esc(format(tick))}</text>`;
  });
  const mid = r((plot.top + plot.bottom) / 2);
  parts.push(
    `<text transform="translate(14 ${mid}) rotate(-90)" text-anchor="middle" fill="#2d3748">${esc(title)}</text>`,
  );
  return parts.join('');
}

export function xAxis(
  plot: Plot,
  ticks: readonly number[],
  scale: Scale,
  title: string,
  format = tickLabel,
): string {
  const parts = [
    `<line x1="${plot.left}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom}" stroke="#a0aec0"/>`,
  ];
  for (const tick of ticks) {
    const x = r(scale(tick));
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${plot.bottom}" y2="${plot.bottom + 4}" stroke="#a0aec0"/><text x="${x}" y="${plot.bottom + 16}" text-anchor="middle" fill="#4a5568">${esc(format(tick))}</text>`,
    );
  }
  parts.push(
    `<text x="${r((plot.left + plot.right) / 2)}" y="${plot.height - 6}" text-anchor="middle" fill="#2d3748">${esc(title)}</text>`,
  );
  return parts.join('');
}

/** A row of colour swatches and names above the plot, right-aligned. */
export function legend(plot: Plot, items: readonly { name: string; color: string }[]): string {
  const widths = items.map((item) => 22 + item.name.length * 6.2);
  let x = plot.right - widths.reduce((a, b) => a + b, 0);
  const y = 14;
  return items
    .map((item, index) => {
      const part = `<rect x="${r(x)}" y="${y - 8}" width="10" height="10" rx="2" fill="${item.color}"/><text x="${r(x + 14)}" y="${y + 1}" fill="#2d3748">${esc(item.name)}</text>`;
      x += widths[index] as number;
      return part;
    })
    .join('');
}
