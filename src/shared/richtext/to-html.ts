import sanitizeHtml from 'sanitize-html';
import { keptPrefix, marksToOpen } from './marks.js';
import { safeImageSrc, safeLinkHref } from './url.js';
import type { RTMark, RTNode } from './types.js';

/**
 * document -> HTML. The document is expected to be validated already; this serializer is still
 * defensive on its own (unknown nodes/marks are skipped, every URL is checked again, all text
 * and attribute values are escaped), and its output then goes through sanitize-html with an
 * allow-list of exactly the tags and attributes it can produce, as a second line of defence.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

/** Text as sanitize-html writes it: `&`, `<` and `>` escaped, quotes left as they are. */
function escapeText(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** An attribute value in double quotes, as sanitize-html writes it: `&`, `<`, `>` and `"` escaped. */
function escapeAttr(s: string): string {
  return s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
}

function attr(name: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  return ` ${name}="${escapeAttr(String(value))}"`;
}

const LINK_TARGETS = new Set(['_blank', '_self', '_parent', '_top']);

interface LinkAttrs {
  href: string;
  target: string | null;
  rel: string | null;
}

/** Safe attributes of a link mark, or null when the link must not be rendered. */
export function linkAttrs(mark: RTMark): LinkAttrs | null {
  const a = mark.attrs ?? {};
  const href = safeLinkHref(a.href);
  if (href === null) return null;
  const target = typeof a.target === 'string' && LINK_TARGETS.has(a.target) ? a.target : null;
  const rel = new Set(
    typeof a.rel === 'string'
      ? a.rel
          .toLowerCase()
          .split(/\s+/)
          .filter((t) => /^[a-z][a-z0-9-]*$/.test(t))
      : [],
  );
  if (target === '_blank') {
    rel.add('noopener');
    rel.add('noreferrer');
  }
  return { href, target, rel: rel.size ? [...rel].join(' ') : null };
}

function openTag(m: RTMark): string {
  switch (m.type) {
    case 'bold':
      return '<strong>';
    case 'italic':
      return '<em>';
    case 'strike':
      return '<s>';
    case 'underline':
      return '<u>';
    case 'code':
      return '<code>';
    case 'link': {
      const a = linkAttrs(m)!;
      return `<a${attr('href', a.href)}${attr('target', a.target)}${attr('rel', a.rel)}>`;
    }
    default:
      return '';
  }
}

function closeTag(m: RTMark): string {
  switch (m.type) {
    case 'bold':
      return '</strong>';
    case 'italic':
      return '</em>';
    case 'strike':
      return '</s>';
    case 'underline':
      return '</u>';
    case 'code':
      return '</code>';
    case 'link':
      return '</a>';
    default:
      return '';
  }
}

const RENDERED_MARKS = new Set(['bold', 'italic', 'strike', 'underline', 'code', 'link']);

/** Marks of a node that are rendered (known types, links with a safe href). */
function renderedMarks(n: RTNode): readonly RTMark[] {
  const marks = n.marks;
  if (!marks || marks.length === 0) return [];
  return marks.filter((m) => RENDERED_MARKS.has(m.type) && (m.type !== 'link' || linkAttrs(m) !== null));
}

function inlineHtml(nodes: readonly RTNode[]): string {
  let out = '';
  const stack: RTMark[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.type === 'hardBreak') {
      out += '<br />';
      continue;
    }
    if (n.type !== 'text' || typeof n.text !== 'string') continue;
    const marks = renderedMarks(n);
    const keep = keptPrefix(stack, marks);
    while (stack.length > keep) out += closeTag(stack.pop()!);
    for (const m of marksToOpen(stack, marks, nodes, i, renderedMarks)) {
      out += openTag(m);
      stack.push(m);
    }
    out += escapeText(n.text);
  }
  while (stack.length) out += closeTag(stack.pop()!);
  return out;
}

function int(v: unknown, def: number, min: number, max: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : def;
}

function blocksHtml(nodes: readonly RTNode[] | undefined): string {
  let out = '';
  for (const n of nodes ?? []) out += blockHtml(n);
  return out;
}

function cellHtml(cell: RTNode): string {
  const tag = cell.type === 'tableHeader' ? 'th' : 'td';
  const colspan = int(cell.attrs?.colspan, 1, 1, 1000);
  const rowspan = int(cell.attrs?.rowspan, 1, 1, 65534);
  return `<${tag}${attr('colspan', colspan > 1 ? colspan : null)}${attr('rowspan', rowspan > 1 ? rowspan : null)}>${blocksHtml(cell.content)}</${tag}>`;
}

function rowHtml(row: RTNode): string {
  if (row.type !== 'tableRow') return '';
  let cells = '';
  for (const c of row.content ?? []) if (c.type === 'tableCell' || c.type === 'tableHeader') cells += cellHtml(c);
  return `<tr>${cells}</tr>`;
}

function tableHtml(table: RTNode): string {
  const rows = (table.content ?? []).filter((r) => r.type === 'tableRow');
  const first = rows[0];
  const headerFirst = !!first && !!first.content?.length && first.content.every((c) => c.type === 'tableHeader');
  let out = '<table>';
  if (headerFirst) out += `<thead>${rowHtml(first)}</thead>`;
  const body = headerFirst ? rows.slice(1) : rows;
  if (body.length) out += `<tbody>${body.map(rowHtml).join('')}</tbody>`;
  return `${out}</table>`;
}

function blockHtml(n: RTNode): string {
  switch (n.type) {
    case 'paragraph':
      return `<p>${inlineHtml(n.content ?? [])}</p>`;
    case 'heading': {
      const level = int(n.attrs?.level, 1, 1, 6);
      return `<h${level}>${inlineHtml(n.content ?? [])}</h${level}>`;
    }
    case 'bulletList':
      return `<ul>${blocksHtml(n.content)}</ul>`;
    case 'orderedList': {
      const start = int(n.attrs?.start, 1, 0, 999_999_999);
      return `<ol${attr('start', start !== 1 ? start : null)}>${blocksHtml(n.content)}</ol>`;
    }
    case 'listItem':
      return `<li>${blocksHtml(n.content)}</li>`;
    case 'blockquote':
      return `<blockquote>${blocksHtml(n.content)}</blockquote>`;
    case 'codeBlock': {
      const lang = n.attrs?.language;
      const cls = typeof lang === 'string' && lang.trim() !== '' ? `language-${lang.trim().split(/\s+/)[0]}` : null;
      let text = '';
      for (const c of n.content ?? []) if (c.type === 'text' && typeof c.text === 'string') text += c.text;
      return `<pre><code${attr('class', cls)}>${escapeText(text)}</code></pre>`;
    }
    case 'horizontalRule':
      return '<hr />';
    case 'image': {
      const src = safeImageSrc(n.attrs?.src);
      if (src === null) return '';
      const alt = n.attrs?.alt;
      const title = n.attrs?.title;
      return `<img${attr('src', src)}${attr('alt', typeof alt === 'string' ? alt : null)}${attr('title', typeof title === 'string' ? title : null)} />`;
    }
    case 'table':
      return tableHtml(n);
    default:
      return '';
  }
}

const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'ul',
    'ol',
    'li',
    'blockquote',
    'pre',
    'code',
    'hr',
    'br',
    'img',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'strong',
    'em',
    's',
    'u',
    'a',
  ],
  allowedAttributes: {
    a: ['href', 'target', 'rel'],
    img: ['src', 'alt', 'title'],
    ol: ['start'],
    th: ['colspan', 'rowspan'],
    td: ['colspan', 'rowspan'],
    code: ['class'],
  },
  allowedClasses: { code: ['language-*'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: true,
  disallowedTagsMode: 'escape',
  selfClosing: ['img', 'br', 'hr'],
  // Never pass through anything that could hold script or styles.
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed'],
  enforceHtmlBoundary: false,
  parseStyleAttributes: false,
};

/** Raw HTML of the document (already escaped, not yet passed through sanitize-html). */
export function docToRawHtml(doc: RTNode): string {
  return blocksHtml(doc.content);
}

export function sanitize(html: string): string {
  return sanitizeHtml(html, SANITIZE_OPTIONS);
}

/** The attributes each allowed tag may carry: SANITIZE_OPTIONS's allow-list, for the check below. */
const ALLOWED_ATTRIBUTES = new Map<string, ReadonlySet<string>>(
  (SANITIZE_OPTIONS.allowedTags as string[]).map((tag) => [tag, new Set((SANITIZE_OPTIONS.allowedAttributes as Record<string, string[]>)[tag] ?? [])]),
);
/** The URL schemes SANITIZE_OPTIONS allows, per tag where it says so. */
const DEFAULT_SCHEMES: ReadonlySet<string> = new Set(SANITIZE_OPTIONS.allowedSchemes as string[]);
const ALLOWED_SCHEMES = new Map<string, ReadonlySet<string>>(
  Object.entries(SANITIZE_OPTIONS.allowedSchemesByTag as Record<string, string[]>).map(([tag, schemes]) => [tag, new Set(schemes)]),
);
const VOID_TAGS = new Set(['br', 'hr', 'img']);
/** One tag as the serializer writes it: lower-case name, double-quoted attributes, ` /` on void tags. */
const TAG = /<(\/?)([a-z][a-z0-9]*)((?: [a-z]+="[^"<>]*")*)( \/)?>/y;
const ATTRIBUTE = / ([a-z]+)="([^"]*)"/g;
const URL_SCHEME = /^([a-z][a-z0-9+.-]*):/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: a URL with a control character or a space goes to sanitize-html
const URL_CONTROL = /[\u0000-\u0020\u007f-\u009f]/;

/** Whether an attribute value passes the allow-list's rule for it (decoded as a browser would: only `&amp;`-style escapes occur). */
function allowedValue(tag: string, name: string, raw: string): boolean {
  const value = raw.replace(/&(amp|lt|gt|quot);/g, (_m, e: string) => (e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : '"'));
  // sanitize-html drops an empty attribute other than alt.
  if (value === '') return name === 'alt';
  switch (name) {
    case 'href':
    case 'src': {
      // Anything unusual (an entity left after decoding, a control character, a space) is left to sanitize-html.
      if (URL_CONTROL.test(value) || /&[#a-z0-9]+;/i.test(value)) return false;
      const scheme = URL_SCHEME.exec(value)?.[1]?.toLowerCase();
      // No scheme: a relative or protocol-relative URL.
      if (scheme === undefined) return true;
      return (ALLOWED_SCHEMES.get(tag) ?? DEFAULT_SCHEMES).has(scheme);
    }
    case 'class':
      return /^language-[^\s]*$/.test(value);
    case 'start':
    case 'colspan':
    case 'rowspan':
      return /^\d{1,10}$/.test(value);
    case 'target':
      return LINK_TARGETS.has(value);
    default:
      return true;
  }
}

/**
 * Whether HTML is exactly what sanitize-html with SANITIZE_OPTIONS would leave unchanged: every
 * `<` opens an allowed tag written the serializer's way, with allowed attributes and URLs of
 * allowed schemes, and no text holds `<` or `>`. One scan instead of a second parse: the
 * serializer's output passes, and anything else goes through sanitize-html as before.
 */
export function isSanitizedHtml(html: string): boolean {
  // sanitize-html's parser replaces NUL characters: not this check's business.
  if (html.includes('\u0000')) return false;
  let at = 0;
  for (;;) {
    const open = html.indexOf('<', at);
    const text = open === -1 ? html.slice(at) : html.slice(at, open);
    if (text.includes('>')) return false;
    if (open === -1) return true;
    TAG.lastIndex = open;
    const m = TAG.exec(html);
    if (!m) return false;
    const [whole, closing, tag, attributes, selfClosing] = m as unknown as [string, string, string, string, string | undefined];
    const allowed = ALLOWED_ATTRIBUTES.get(tag);
    if (!allowed) return false;
    if (closing && (attributes || selfClosing || VOID_TAGS.has(tag))) return false;
    if (!closing && !!selfClosing !== VOID_TAGS.has(tag)) return false;
    for (const a of attributes.matchAll(ATTRIBUTE)) if (!allowed.has(a[1]!) || !allowedValue(tag, a[1]!, a[2]!)) return false;
    at = open + whole.length;
  }
}

/**
 * The document's sanitized HTML. The serializer escapes every text and attribute and writes only
 * allow-listed tags, so its output is checked in one scan (isSanitizedHtml); only HTML that fails
 * the check is passed through sanitize-html, the second line of defence. sanitize-html parsed the
 * whole output again on every write: a third of a 5 KB post's rendering time.
 */
export function docToHtml(doc: RTNode): string {
  const raw = docToRawHtml(doc);
  return isSanitizedHtml(raw) ? raw : sanitize(raw);
}
