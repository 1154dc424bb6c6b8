import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { validationFieldErrors } from '../../plugins/errors.js';
import { compileSchema } from '../../plugins/validation.js';
import { csvLine } from '../../shared/csv.js';
import { invalid } from '../../shared/errors.js';
import { redirectFields } from './redirects.resource.js';
import { exactKey, splitPath } from './redirects.rules.js';
import { MAX_IMPORT_ROWS, type RuleInput } from './redirects.service.js';

export type ImportEntry = { row: number; input: RuleInput } | { row: number; error: { field?: string; message: string } };

/** One import row: the create body's fields (unknown ones dropped). */
const EntrySchema = redirectFields.createBody();
const validateJson = compileSchema(EntrySchema, 'json');
const validateText = compileSchema(EntrySchema, 'text');

function check(row: number, value: Record<string, unknown>, validate: typeof validateJson): ImportEntry {
  if (validate(value)) return { row, input: value as RuleInput };
  const errors = validationFieldErrors((validate.errors ?? []) as never);
  const [field, messages] = Object.entries(errors)[0] ?? ['body', ['is invalid']];
  return { row, error: { field, message: `${field} ${messages![0]}` } };
}

/** `{ entries: [...] }`: each entry checked on its own, numbered from 1. */
export function entriesFromJson(entries: unknown[]): ImportEntry[] {
  return entries.map((e, i) =>
    e && typeof e === 'object' && !Array.isArray(e)
      ? check(i + 1, { ...(e as object) }, validateJson)
      : { row: i + 1, error: { message: 'must be an object' } },
  );
}

/** CSV header names: the export's snake_case columns or the API's camelCase names. */
const HEADER: Record<string, keyof RuleInput> = {
  source_path: 'sourcePath',
  sourcepath: 'sourcePath',
  target_url: 'targetUrl',
  targeturl: 'targetUrl',
  status_code: 'statusCode',
  statuscode: 'statusCode',
  is_regex: 'isRegex',
  isregex: 'isRegex',
  is_active: 'isActive',
  isactive: 'isActive',
  preserve_query_string: 'preserveQueryString',
  preservequerystring: 'preserveQueryString',
  note: 'note',
};
const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };

/**
 * A CSV file (RFC 4180, UTF-8, optional BOM, header row required) read as a stream, row by row:
 * never more than MAX_IMPORT_ROWS rows are read. Empty cells are left out (the default applies);
 * `hit_count` and other columns are ignored.
 */
export async function entriesFromCsv(stream: Readable): Promise<ImportEntry[]> {
  const parser = stream.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, trim: false, max_record_size: 16_384 }));
  const out: ImportEntry[] = [];
  let header: Array<keyof RuleInput | null> | null = null;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!header) {
        header = record.map((h) => HEADER[h.trim().toLowerCase()] ?? null);
        if (!header.includes('sourcePath') || !header.includes('targetUrl')) {
          throw invalid('IMPORT_FILE_INVALID', 'file', 'The CSV needs a header row with source_path and target_url (or sourcePath and targetUrl).');
        }
        continue;
      }
      if (out.length >= MAX_IMPORT_ROWS) throw invalid('VALIDATION_FAILED', 'file', `An import holds at most ${MAX_IMPORT_ROWS} rows; split the file.`);
      const value: Record<string, unknown> = {};
      header.forEach((name, i) => {
        const cell = record[i];
        if (!name || cell === undefined || cell === '') return;
        const flag = BOOLEAN_TEXT[cell.trim().toLowerCase()];
        value[name] = name === 'isRegex' || name === 'isActive' || name === 'preserveQueryString' ? (flag ?? cell) : cell;
      });
      out.push(check(out.length + 1, value, validateText));
    }
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('CSV_')) throw invalid('IMPORT_FILE_INVALID', 'file', `The CSV cannot be read: ${(err as Error).message}`);
    throw err;
  } finally {
    stream.resume();
  }
  if (!header) throw invalid('IMPORT_FILE_INVALID', 'file', 'The CSV file is empty.');
  return out;
}

export interface ExportRow {
  sourcePath: string;
  targetUrl: string;
  statusCode: number;
  isRegex: boolean;
  isActive: boolean;
  preserveQueryString: boolean;
  hitCount: number;
}

export type ExportFormat = 'csv' | 'nginx' | 'apache';

/** The spec's columns (decisions F2: RFC 4180, formulas neutralised), plus preserve_query_string. */
export async function* csvExport(rows: AsyncIterable<ExportRow>) {
  yield csvLine(['source_path', 'target_url', 'status_code', 'is_regex', 'is_active', 'hit_count', 'preserve_query_string']);
  for await (const r of rows) {
    yield csvLine([r.sourcePath, r.targetUrl, r.statusCode, r.isRegex, r.isActive, r.hitCount, r.preserveQueryString]);
  }
}

const nginxString = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
/** What nginx cannot take in a quoted map key, or would read as a variable in a value (`$name`; `$1` is a capture); such rules are left out with a comment. */
const NGINX_UNSAFE_KEY = /[\r\n]/;
const NGINX_UNSAFE_VALUE = /[\r\n]|\$(?!\d)/;

/**
 * nginx: one `map` per status code from `$uri` to the target (exact keys as strings, regex ones
 * as `~pattern`, nginx's own order: exact first, then regex in file order), and the `if` lines
 * that return them. Active rules only.
 */
export async function* nginxExport(rows: AsyncIterable<ExportRow>) {
  const byStatus = new Map<number, string[]>();
  const skipped: string[] = [];
  for await (const r of rows) {
    if (!r.isActive) continue;
    const target = r.preserveQueryString ? `${r.targetUrl}$is_args$args` : r.targetUrl;
    if (NGINX_UNSAFE_KEY.test(r.sourcePath) || NGINX_UNSAFE_VALUE.test(r.targetUrl)) {
      skipped.push(`# skipped (characters nginx cannot hold here): ${JSON.stringify(r.sourcePath)}`);
      continue;
    }
    const lines = byStatus.get(r.statusCode) ?? byStatus.set(r.statusCode, []).get(r.statusCode)!;
    if (r.isRegex) lines.push(`    ${nginxString(`~${r.sourcePath}`)} ${nginxString(target)};`);
    else {
      const key = exactKey(r.sourcePath);
      lines.push(`    ${nginxString(key)} ${nginxString(target)};`);
      if (key !== '/') lines.push(`    ${nginxString(`${key}/`)} ${nginxString(target)};`);
    }
  }
  yield '# Cairn redirects for nginx. Put the maps in the http block and the if lines in the server block.\n';
  for (const line of skipped) yield `${line}\n`;
  for (const [status, lines] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    yield `map $uri $cairn_redirect_${status} {\n    default "";\n${lines.join('\n')}\n}\n`;
  }
  yield '\n# server { ...\n';
  for (const status of [...byStatus.keys()].sort()) yield `if ($cairn_redirect_${status}) { return ${status} $cairn_redirect_${status}; }\n`;
}

const regexEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Apache mod_rewrite: one RewriteRule per active rule, exact ones first (as resolved), the path
 * matched with or without its leading slash (server config and .htaccess), `QSA` or `QSD` for
 * the query string.
 */
export async function* apacheExport(rows: AsyncIterable<ExportRow>) {
  const exact: string[] = [];
  const regex: string[] = [];
  for await (const r of rows) {
    if (!r.isActive) continue;
    if (/[\r\n]/.test(r.sourcePath) || /[\s\r\n]/.test(r.targetUrl)) continue;
    const flags = `[R=${r.statusCode},L,${r.preserveQueryString ? 'QSA' : 'QSD'}]`;
    if (r.isRegex) regex.push(`RewriteRule ${r.sourcePath.replace(/^\^\//, '^/?').replace(/\s/g, '\\s')} ${r.targetUrl} ${flags}`);
    else {
      const key = exactKey(splitPath(r.sourcePath).path).replace(/^\//, '');
      exact.push(`RewriteRule ^/?${regexEscape(key).replace(/\s/g, '\\s')}/?$ ${r.targetUrl} ${flags}`);
    }
  }
  yield '# Cairn redirects for Apache (mod_rewrite)\nRewriteEngine On\n';
  for (const line of [...exact, ...regex]) yield `${line}\n`;
}
