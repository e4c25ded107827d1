/** Plain-text output helpers for the CLI. */

/** Left-aligned columns separated by two spaces; no trailing spaces. */
export function formatTable(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** A value as one line: strings quoted, absent shown as `(unset)`. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '(unset)';
  return JSON.stringify(value);
}
