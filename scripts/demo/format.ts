// Number formatting and fixed-width tables for an 80-column terminal.

export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function fixed(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

/** Milliseconds with precision that suits the size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

/** USD: six decimals below a dollar, so small sums stay readable and columns line up. */
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return value >= 1 ? `$${value.toFixed(2)}` : `$${value.toFixed(6)}`;
}

export type Align = 'left' | 'right';

export interface Column {
  title: string;
  align?: Align;
}

/** A plain-text table: header, a rule, rows; columns sized to their widest cell. */
export function table(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  indent = 2,
): string[] {
  const widths = columns.map((column, index) =>
    Math.max(column.title.length, ...rows.map((row) => (row[index] ?? '').length)),
  );
  const render = (cells: readonly string[]) =>
    ' '.repeat(indent) +
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        const width = widths[index] as number;
        return column.align === 'left' ? cell.padEnd(width) : cell.padStart(width);
      })
      .join('  ')
      .trimEnd();
  const rule = ' '.repeat(indent) + widths.map((width) => '─'.repeat(width)).join('  ');
  return [render(columns.map((column) => column.title)), rule, ...rows.map(render)];
}

/** Cuts a line to `width` characters. */
export function clip(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`;
}
