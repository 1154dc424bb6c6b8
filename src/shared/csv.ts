/**
 * CSV as exports write it (decisions F2): RFC 4180 (CRLF line ends, fields quoted when they hold
 * a quote, comma or line break, quotes doubled), UTF-8, and text cells a spreadsheet would run
 * as a formula (leading `=`, `+`, `-`, `@`, tab or carriage return) prefixed with `'`.
 * Numbers and booleans are written as they are.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: ReadonlyArray<string | number | boolean | null | undefined>): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
