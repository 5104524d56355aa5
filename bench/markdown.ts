/** Markdown tables and the number formats of the bench's output. */

export const int = (value: number): string =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–';
export const ms = (value: number): string =>
  !Number.isFinite(value)
    ? '–'
    : value >= 100
      ? Math.round(value).toLocaleString('en-US')
      : value.toFixed(value >= 10 ? 1 : 2);
export const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** A Markdown table; the first `textColumns` columns are left-aligned, the rest (numbers) right-aligned. */
export function table(header: string[], rows: string[][], textColumns = 1): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  const rule = header.map((_, i) => (i < textColumns ? '---' : '---:'));
  return [line(header), line(rule), ...rows.map(line)].join('\n');
}
