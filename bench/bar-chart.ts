// A grouped bar chart as a standalone SVG (no dependency), for the charts docs/benchmarks.md shows.

export interface BarSeries {
  name: string;
  color: string;
  /** One value per group; undefined leaves a gap. */
  values: (number | undefined)[];
}

export interface BarChart {
  title: string;
  groups: string[];
  series: BarSeries[];
  yLabel: string;
  /** Logarithmic y axis (values spanning decades, such as unbatched vs batched throughput). */
  log?: boolean;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function label(value: number): string {
  if (value >= 10_000) return `${Math.round(value / 1000)}k`;
  if (value >= 1000) return `${(value / 1000).toFixed(1)}k`;
  return String(Math.round(value));
}

export function barChartSvg(chart: BarChart): string {
  const width = 720;
  const height = 360;
  const left = 64;
  const right = 130;
  const top = 40;
  const bottom = 48;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const all = chart.series
    .flatMap((series) => series.values)
    .filter((value): value is number => (value ?? 0) > 0);
  const max = Math.max(1, ...all);
  const min = chart.log ? Math.max(1, 10 ** Math.floor(Math.log10(Math.min(...all, max)))) : 0;
  const top10 = chart.log ? 10 ** Math.ceil(Math.log10(max)) : max * 1.1;
  const y = (value: number) =>
    chart.log
      ? top +
        plotH -
        ((Math.log10(Math.max(value, min)) - Math.log10(min)) / (Math.log10(top10) - Math.log10(min))) * plotH
      : top + plotH - (value / top10) * plotH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="14">${escapeXml(chart.title)}</text>`,
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#000"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#000"/>`,
    `<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">${escapeXml(chart.yLabel)}</text>`,
  ];
  const ticks = chart.log
    ? Array.from(
        { length: Math.round(Math.log10(top10) - Math.log10(min)) + 1 },
        (_, index) => min * 10 ** index,
      )
    : [0, 0.25, 0.5, 0.75, 1].map((share) => share * top10);
  for (const tick of ticks) {
    parts.push(
      `<line x1="${left}" y1="${y(tick).toFixed(1)}" x2="${left + plotW}" y2="${y(tick).toFixed(1)}" stroke="#e0e0e0"/>`,
      `<text x="${left - 6}" y="${(y(tick) + 4).toFixed(1)}" text-anchor="end">${label(tick)}</text>`,
    );
  }
  const groupW = plotW / chart.groups.length;
  const barW = (groupW * 0.8) / chart.series.length;
  chart.groups.forEach((group, groupIndex) => {
    const x0 = left + groupIndex * groupW + groupW * 0.1;
    parts.push(
      `<text x="${(x0 + groupW * 0.4).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${escapeXml(group)}</text>`,
    );
    chart.series.forEach((series, seriesIndex) => {
      const value = series.values[groupIndex];
      if (value === undefined || !(value > 0)) return;
      const x = x0 + seriesIndex * barW;
      const barTop = y(value);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${barTop.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(top + plotH - barTop).toFixed(1)}" fill="${series.color}"/>`,
      );
    });
  });
  chart.series.forEach((series, index) => {
    const legendY = top + 16 + index * 18;
    parts.push(
      `<rect x="${left + plotW + 12}" y="${legendY - 10}" width="14" height="12" fill="${series.color}"/>`,
      `<text x="${left + plotW + 32}" y="${legendY}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
