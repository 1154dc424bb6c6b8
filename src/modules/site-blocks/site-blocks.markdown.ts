import { parseJson } from '../../db/json.js';
import type { FieldDefinition } from '../../shared/field-schema/index.js';
import { docToMarkdown, escapeText } from '../../shared/richtext/to-markdown.js';
import type { RTNode } from '../../shared/richtext/types.js';
import { safeImageSrc, safeLinkHref } from '../../shared/richtext/url.js';
import type { PublishedPage } from './published-pages.js';

type Data = Record<string, unknown>;

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const text = (s: string) =>
  s
    .split(/\n{2,}/)
    .map((p) => escapeText(p.trim(), true))
    .filter(Boolean)
    .join('\n\n');
const label = (f: FieldDefinition) => oneLine(typeof f.label === 'string' && f.label ? f.label : f.name);
const urlOf = (v: unknown) => (typeof v === 'string' ? v : v && typeof v === 'object' ? ((v as Data).url ?? (v as Data).id) : null);

/** One value as markdown blocks ('' for nothing to show); `depth` is the heading level of nested objects. */
function valueMd(f: FieldDefinition | NonNullable<FieldDefinition['items']>, name: string, v: unknown, depth: number): string {
  if (v === null || v === undefined || v === '') return '';
  switch (f.type) {
    case 'string':
    case 'text':
      return typeof v === 'string' ? text(v) : '';
    case 'richtext':
      if (typeof v === 'string') return v.trim();
      return v && typeof v === 'object' ? docToMarkdown(v as RTNode).trim() : '';
    case 'url': {
      const href = safeLinkHref(v);
      return href ? `[${escapeText(name, false)}](<${href}>)` : '';
    }
    case 'email':
      return typeof v === 'string' ? `<${v}>` : '';
    case 'image': {
      const src = safeImageSrc(urlOf(v));
      return src ? `![${escapeText(name, false)}](<${src}>)` : '';
    }
    case 'file': {
      const href = safeLinkHref(urlOf(v));
      return href ? `[${escapeText(name, false)}](<${href}>)` : '';
    }
    case 'number':
    case 'date':
    case 'datetime':
    case 'select':
      return `${escapeText(name, true)}: ${escapeText(String(v), false)}`;
    case 'multiselect':
      return Array.isArray(v) && v.length ? `${escapeText(name, true)}: ${escapeText(v.join(', '), false)}` : '';
    case 'object':
      return v && typeof v === 'object' && !Array.isArray(v) ? fieldsMd(f.fields ?? [], v as Data, depth + 1) : '';
    case 'array': {
      const items = (f as FieldDefinition).items;
      if (!Array.isArray(v) || !items) return '';
      const parts = v.map((item) => valueMd(items, name, item, depth)).filter(Boolean);
      return items.type === 'object' ? parts.join('\n\n') : parts.map((p) => `- ${p.replace(/\n/g, '\n  ')}`).join('\n');
    }
    default:
      // boolean and color are presentation; dataSource fields are live lists, not the page's text.
      return '';
  }
}

function fieldsMd(fields: readonly FieldDefinition[], data: Data, depth: number): string {
  const parts: string[] = [];
  for (const f of fields) {
    const body = valueMd(f, label(f), data[f.name], depth);
    if (!body) continue;
    const heading = f.type === 'object' || (f.type === 'array' && f.items?.type === 'object');
    parts.push(heading ? `${'#'.repeat(Math.min(depth + 1, 6))} ${escapeText(label(f), false)}\n\n${body}` : body);
  }
  return parts.join('\n\n');
}

/**
 * A published page as markdown (decisions S15): `# name`, then the fields of its schema in order
 * with what readers see (the published snapshot under staged publishing): text as paragraphs,
 * rich text as markdown, links, images and files as markdown links, other scalars as
 * `Label: value`, objects and arrays of objects under `##` headings. Booleans, colors and
 * dataSource fields are left out, and so are data fields the schema no longer names.
 */
export function pageMarkdown(page: PublishedPage): string {
  const snapshot = parseJson<{ schema: FieldDefinition[]; data: Data } | null>(page.published_snapshot, null);
  const schema = snapshot?.schema ?? parseJson<FieldDefinition[]>(page.schema, []);
  const data = snapshot?.data ?? parseJson<Data>(page.data, {});
  const body = fieldsMd(schema, data, 1);
  return `# ${escapeText(oneLine(page.name), false)}\n\n${body ? `${body}\n` : ''}`;
}
