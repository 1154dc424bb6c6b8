import { hasMark, keptPrefix, marksToOpen } from './marks.js';
import { linkAttrs } from './to-html.js';
import { safeImageSrc } from './url.js';
import type { RTMark, RTNode } from './types.js';

/**
 * document -> markdown (CommonMark + GFM tables and strikethrough), written so that
 * markdownToDoc(docToMarkdown(doc)) gives `doc` back for ordinary content. Things markdown
 * cannot express are approximated: leading/trailing whitespace of a textblock and hard breaks at
 * its edges are dropped, hard breaks in headings and table cells become spaces, table cells hold
 * one line (their blocks joined by spaces), the first table row is always the header row, and
 * colspan/rowspan are lost. Links that url.ts refuses keep only their text; refused images are
 * dropped.
 */

export function docToMarkdown(doc: RTNode): string {
  const out = blocksMd(doc.content ?? []);
  return out === '' ? '' : `${out}\n`;
}

function blocksMd(blocks: readonly RTNode[], tight = false): string {
  const parts: string[] = [];
  let prev: RTNode | null = null; // last block that produced output
  let prevAlternate = false;
  for (const b of blocks) {
    // Two adjacent lists of the same kind need different markers, or they would merge.
    const alternate: boolean = prev !== null && prev.type === b.type && !prevAlternate;
    const s = blockMd(b, alternate);
    if (s === '') continue;
    parts.push(s);
    prev = b;
    prevAlternate = alternate;
  }
  return parts.join(tight ? '\n' : '\n\n');
}

function blockMd(n: RTNode, alternateList: boolean): string {
  switch (n.type) {
    case 'paragraph':
      return inlineMd(n.content ?? [], INLINE_BLOCK);
    case 'heading': {
      const level = typeof n.attrs?.level === 'number' ? Math.min(6, Math.max(1, n.attrs.level)) : 1;
      let text = inlineMd(n.content ?? [], INLINE_HEADING);
      // "# foo #": a trailing run of # would be taken as the closing sequence
      text = escapeClosingHashes(text);
      return '#'.repeat(level) + (text ? ` ${text}` : '');
    }
    case 'bulletList':
    case 'orderedList':
      return listMd(n, alternateList);
    case 'blockquote': {
      const inner = blocksMd(n.content ?? []);
      return prefixLines(inner, '> ', '>');
    }
    case 'codeBlock':
      return codeBlockMd(n);
    case 'horizontalRule':
      return '---';
    case 'image':
      return imageMd(n);
    case 'table':
      return tableMd(n);
    default:
      return '';
  }
}

/** Escapes a trailing run of "#" preceded by a space (or alone), which would close an ATX heading. */
function escapeClosingHashes(text: string): string {
  const trimmed = text.trimEnd();
  let i = trimmed.length;
  while (i > 0 && trimmed[i - 1] === '#') i--;
  if (i === trimmed.length) return text;
  if (i === 0 || trimmed[i - 1] === ' ' || trimmed[i - 1] === '\t') return `${trimmed.slice(0, i)}\\${trimmed.slice(i)}`;
  return text;
}

function prefixLines(text: string, prefix: string, emptyPrefix: string): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? emptyPrefix : prefix + l))
    .join('\n');
}

/**
 * Lists: `-` (or `*` when the previous block is also a bullet list, since two adjacent lists
 * with the same marker would merge into one), `1.` (or `1)`). A list is written tight when
 * every item is one paragraph, optionally followed by one nested list.
 */
function listMd(list: RTNode, alternate: boolean): string {
  const ordered = list.type === 'orderedList';
  const items = (list.content ?? []).filter((i) => i.type === 'listItem');
  const tight = items.every((item) => {
    const c = item.content ?? [];
    return c.length <= 1 || (c.length === 2 && c[0]!.type === 'paragraph' && canInterruptParagraph(c[1]!));
  });
  let num = ordered ? (typeof list.attrs?.start === 'number' ? list.attrs.start : 1) : 0;
  const out: string[] = [];
  for (const item of items) {
    const marker = ordered ? `${num++}${alternate ? ')' : '.'} ` : alternate ? '* ' : '- ';
    const content = item.content ?? [];
    const first = content[0];
    const firstEmpty = first?.type === 'paragraph' && inlineMd(first.content ?? [], INLINE_BLOCK) === '';
    const body = blocksMd(content, tight);
    const indent = ' '.repeat(marker.length);
    if (body === '') {
      out.push(marker.trimEnd());
    } else if (firstEmpty) {
      // The item starts with a non-paragraph block: begin it on the next line
      // (avoids e.g. "- ---" being read as a thematic break).
      out.push(`${marker.trimEnd()}\n${prefixLines(body, indent, '')}`);
    } else {
      const lines = body.split('\n');
      out.push(marker + lines[0] + (lines.length > 1 ? `\n${prefixLines(lines.slice(1).join('\n'), indent, '')}` : ''));
    }
  }
  return out.join(tight ? '\n' : '\n\n');
}

/**
 * Whether a nested list can directly follow its item's paragraph line (tight list): only a
 * bullet list or a list starting at 1, whose first item is not empty ("a\n-" is a setext heading).
 */
function canInterruptParagraph(list: RTNode): boolean {
  if (list.type !== 'bulletList' && list.type !== 'orderedList') return false;
  if (list.type === 'orderedList' && list.attrs?.start !== 1) return false;
  const firstPara = list.content?.[0]?.content?.[0];
  return !!firstPara && firstPara.type === 'paragraph' && inlineMd(firstPara.content ?? [], INLINE_BLOCK) !== '';
}

function codeBlockMd(n: RTNode): string {
  let text = '';
  for (const c of n.content ?? []) if (c.type === 'text' && typeof c.text === 'string') text += c.text;
  const lang = typeof n.attrs?.language === 'string' ? (n.attrs.language.trim().split(/\s+/)[0] ?? '') : '';
  const useTilde = lang.includes('`');
  const ch = useTilde ? '~' : '`';
  const longest = Math.max(0, ...(text.match(useTilde ? /~+/g : /`+/g) ?? []).map((r) => r.length));
  const fence = ch.repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${text}${text === '' ? '' : '\n'}${fence}`;
}

function imageMd(n: RTNode): string {
  const src = safeImageSrc(n.attrs?.src);
  if (src === null) return '';
  const alt = typeof n.attrs?.alt === 'string' ? n.attrs.alt : '';
  const title = typeof n.attrs?.title === 'string' && n.attrs.title !== '' ? n.attrs.title : null;
  return `![${escapeText(alt.replace(/\s+/g, ' '), false)}](${destination(src)}${title === null ? '' : ` ${quoteTitle(title)}`})`;
}

function tableMd(table: RTNode): string {
  const rows = (table.content ?? []).filter((r) => r.type === 'tableRow');
  const grid = rows.map((row) => {
    const cells: string[] = [];
    for (const cell of row.content ?? []) {
      cells.push(cellMd(cell));
      const colspan = typeof cell.attrs?.colspan === 'number' ? cell.attrs.colspan : 1;
      for (let i = 1; i < colspan && i < 1000; i++) cells.push('');
    }
    return cells;
  });
  const width = Math.max(1, ...grid.map((r) => r.length));
  const line = (cells: string[]): string => {
    const padded = cells.concat(Array<string>(width - cells.length).fill(''));
    return `| ${padded.map((c) => c || ' ').join(' | ')} |`;
  };
  const [head = [], ...body] = grid;
  return [line(head), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n');
}

/** A table cell on one line: its blocks as inline markdown joined by spaces. */
function cellMd(cell: RTNode): string {
  const parts: string[] = [];
  const walk = (n: RTNode): void => {
    switch (n.type) {
      case 'paragraph':
      case 'heading':
        parts.push(inlineMd(n.content ?? [], INLINE_TABLE));
        break;
      case 'codeBlock': {
        let text = '';
        for (const c of n.content ?? []) if (typeof c.text === 'string') text += c.text;
        if (text.trim()) parts.push(codeSpan(text, true));
        break;
      }
      case 'image':
        parts.push(imageMd(n));
        break;
      default:
        for (const c of n.content ?? []) walk(c);
    }
  };
  for (const b of cell.content ?? []) walk(b);
  return parts.filter((p) => p !== '').join(' ');
}

// ---------------------------------------------------------------------------------------------
// Inline content

interface InlineOptions {
  /** heading or table cell: hard breaks become spaces */
  singleLine: boolean;
  /** table cell: "|" in code spans must be escaped */
  table: boolean;
}
const INLINE_BLOCK: InlineOptions = { singleLine: false, table: false };
const INLINE_HEADING: InlineOptions = { singleLine: true, table: false };
const INLINE_TABLE: InlineOptions = { singleLine: true, table: true };

const isCode = (n: RTNode): boolean => !!n.marks?.some((m) => m.type === 'code');

/** Marks written as delimiters around text (code is written per node, as a code span). */
function delimMarks(n: RTNode): readonly RTMark[] {
  if (n.type !== 'text' || !n.marks) return [];
  return n.marks.filter((m) => m.type === 'bold' || m.type === 'italic' || m.type === 'strike' || (m.type === 'link' && linkAttrs(m) !== null));
}

function openDelim(m: RTMark): string {
  switch (m.type) {
    case 'bold':
      return '**';
    case 'italic':
      return '*';
    case 'strike':
      return '~~';
    case 'link':
      return '[';
    default:
      return '';
  }
}

function closeDelim(m: RTMark): string {
  switch (m.type) {
    case 'bold':
      return '**';
    case 'italic':
      return '*';
    case 'strike':
      return '~~';
    case 'link':
      return `](${destination(linkAttrs(m)!.href)})`;
    default:
      return '';
  }
}

function inlineMd(input: readonly RTNode[], opts: InlineOptions): string {
  // Hard breaks at the edges cannot be expressed (a trailing "\" would be literal text).
  const nodes = input.filter((n) => n.type === 'hardBreak' || (n.type === 'text' && typeof n.text === 'string' && n.text !== ''));
  while (nodes.length && nodes[0]!.type === 'hardBreak') nodes.shift();
  while (nodes.length && nodes[nodes.length - 1]!.type === 'hardBreak') nodes.pop();

  let out = '';
  let lineStart = true;
  let pendingWs = '';
  const stack: RTMark[] = [];
  const closeTo = (k: number): void => {
    while (stack.length > k) out += closeDelim(stack.pop()!);
  };

  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.type === 'hardBreak') {
      if (opts.singleLine) {
        pendingWs += ' ';
        continue;
      }
      // Keep open only the marks that continue on both sides of the break: after it, on text that
      // is not only whitespace (a mark carried by a lone space and then closed would put the
      // break at the very end of a link, which the parser reads back differently).
      const prevMarks = i > 0 ? delimMarks(nodes[i - 1]!) : [];
      let j = i + 1;
      while (j < nodes.length && nodes[j]!.type === 'text' && !isCode(nodes[j]!) && nodes[j]!.text!.trim() === '') j++;
      const nextMarks = j < nodes.length && nodes[j]!.type !== 'hardBreak' ? delimMarks(nodes[j]!) : [];
      const both = prevMarks.filter((m) => hasMark(nextMarks, m));
      closeTo(keptPrefix(stack, both));
      out += `${pendingWs}\\\n`;
      pendingWs = '';
      lineStart = true;
      continue;
    }
    const code = isCode(n);
    const text = n.text!.replace(/\r\n?|\n/g, ' ');
    const marks = delimMarks(n);
    if (!code && text.trim() === '') {
      // whitespace only: close what it does not carry, open nothing
      closeTo(keptPrefix(stack, marks));
      pendingWs += text;
      continue;
    }
    const leadLen = code ? 0 : text.length - text.trimStart().length;
    const trailLen = code ? 0 : text.length - text.trimEnd().length;
    const lead = text.slice(0, leadLen);
    const trail = text.slice(text.length - trailLen);
    const core = text.slice(leadLen, text.length - trailLen);
    closeTo(keptPrefix(stack, marks));
    out += pendingWs + lead;
    pendingWs = '';
    for (const m of marksToOpen(stack, marks, nodes, i, delimMarks)) {
      out += openDelim(m);
      stack.push(m);
    }
    out += code ? codeSpan(core, opts.table) : escapeText(core, lineStart);
    lineStart = false;
    pendingWs = trail;
  }
  closeTo(0);
  // Leading whitespace would be stripped (or, 4 spaces deep, start an indented code block).
  return out.replace(/^[ \t]+/, '');
}

// Inline syntax characters; "<" only when it could start an autolink, "&" only before something
// that looks like an entity, "!" at the end (it could be followed by a link's "[").
const ESCAPE = /[\\`*_[\]~|]|<(?=\S)|&(?=#?[a-zA-Z0-9]+;)|!$/g;

/** Backslash-escapes what markdown would otherwise read as syntax. */
export function escapeText(s: string, atLineStart: boolean): string {
  let r = s.replace(ESCAPE, '\\$&');
  if (atLineStart) {
    r = r.replace(/^(\s*)([#>+=-])/, '$1\\$2').replace(/^(\s*\d{1,9})([.)])/, '$1\\$2');
  }
  return r;
}

function codeSpan(text: string, inTable: boolean): string {
  let t = text;
  if (inTable) t = t.replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(t.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = /^`|`$/.test(t) || (/^ /.test(t) && / $/.test(t) && t.trim() !== '') ? ' ' : '';
  return fence + pad + t + pad + fence;
}

function destination(url: string): string {
  if (url === '' || /[\s<>()\\]/.test(url)) {
    return `<${url.replace(/[\r\n]/g, (c) => (c === '\n' ? '%0A' : '%0D')).replace(/[<>\\]/g, '\\$&')}>`;
  }
  return url.replace(/&(?=#?[a-zA-Z0-9]+;)/g, '\\&');
}

function quoteTitle(title: string): string {
  return `"${title.replace(/[\\"]/g, '\\$&').replace(/&(?=#?[a-zA-Z0-9]+;)/g, '\\&')}"`;
}
