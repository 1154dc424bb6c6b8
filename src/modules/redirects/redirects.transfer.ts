import { importReader } from '../../kit/import.js';
import { csvLine } from '../../shared/csv.js';
import { redirectFields, type RuleInput } from './redirects.resource.js';
import { exactKey, splitPath } from './redirects.rules.js';
import { MAX_IMPORT_ROWS } from './redirects.service.js';

/** Redirect imports (decisions R7): the create body per row; CSV headers as the export writes them, or the API's names. */
export const redirectImport = importReader<RuleInput>({
  schema: redirectFields.createBody(),
  columns: {
    source_path: 'sourcePath',
    target_url: 'targetUrl',
    status_code: 'statusCode',
    is_regex: 'isRegex',
    is_active: 'isActive',
    preserve_query_string: 'preserveQueryString',
  },
  required: ['sourcePath', 'targetUrl'],
  maxRows: MAX_IMPORT_ROWS,
  maxFileBytes: 48 * 1024 * 1024,
});

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
