import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { safeImageSrc, safeLinkHref } from './url.js';
import { MAX_DEPTH, emptyParagraph, pushInline, sortMarks, type RTMark, type RTNode } from './types.js';

/**
 * markdown -> document JSON.
 *
 * CommonMark + GFM tables + ~~strikethrough~~ (markdown-it's "default" preset). Raw HTML is not
 * recognised (`html: false`): it stays literal text and is escaped on output. Links and images
 * go through the URL policy of url.ts (refused link: text kept, mark dropped; refused image:
 * dropped).
 *
 * Images are block nodes (TipTap's Image default), so a paragraph that contains images is split
 * around them; images in a heading are moved after it. Markdown features without a node in the
 * schema are flattened to text (e.g. an image's alt keeps only its text).
 */
const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false, breaks: false });
// Let every link/image through the parser: url.ts decides, so that a refused link keeps just its
// text ("[x](javascript:...)" becomes "x", not the literal markdown source).
md.validateLink = () => true;

/** Blocks nested deeper than this are flattened into their parent (see limitDepth). */
const FLATTEN_DEPTH = MAX_DEPTH - 10;

interface Frame {
  node: RTNode;
  children: RTNode[];
}

/** The textblock that the next `inline` token belongs to. */
type Pending = { kind: 'paragraph' } | { kind: 'heading'; level: number } | null;

export function markdownToNodes(markdown: string): RTNode {
  const tokens = md.parse(markdown, {});
  const root: Frame = { node: { type: 'doc' }, children: [] };
  const stack: Frame[] = [root];
  let pending: Pending = null;
  const top = (): Frame => stack[stack.length - 1]!;
  const push = (type: string, attrs?: Record<string, unknown>): void => {
    const node: RTNode = attrs ? { type, attrs } : { type };
    stack.push({ node, children: [] });
  };
  const pop = (): void => {
    if (stack.length <= 1) return;
    const frame = stack.pop()!;
    top().children.push(finish(frame));
  };

  for (const t of tokens) {
    switch (t.type) {
      case 'paragraph_open':
        pending = { kind: 'paragraph' };
        break;
      case 'heading_open':
        pending = { kind: 'heading', level: headingLevel(t.tag) };
        break;
      case 'paragraph_close':
      case 'heading_close':
        pending = null;
        break;
      case 'inline': {
        const children = top().children;
        const parentType = top().node.type;
        const inCell = parentType === 'tableCell' || parentType === 'tableHeader';
        const { runs, images } = convertInline(t.children ?? []);
        if (pending?.kind === 'heading') {
          children.push(textblock('heading', runs.flat(), { level: pending.level }));
          children.push(...images.map((x) => x.node));
        } else {
          // paragraph, table cell, or anything else: a paragraph split around images
          appendParagraphs(children, runs, images, inCell || pending?.kind === 'paragraph');
        }
        break;
      }
      case 'bullet_list_open':
        push('bulletList');
        break;
      case 'ordered_list_open':
        push('orderedList', { start: listStart(t) });
        break;
      case 'list_item_open':
        push('listItem');
        break;
      case 'blockquote_open':
        push('blockquote');
        break;
      case 'table_open':
        push('table');
        break;
      case 'tr_open':
        push('tableRow');
        break;
      case 'th_open':
        push('tableHeader', { colspan: 1, rowspan: 1 });
        break;
      case 'td_open':
        push('tableCell', { colspan: 1, rowspan: 1 });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
      case 'list_item_close':
      case 'blockquote_close':
      case 'table_close':
      case 'tr_close':
      case 'th_close':
      case 'td_close':
        pop();
        break;
      case 'fence':
      case 'code_block': {
        const language = t.type === 'fence' ? fenceLanguage(t.info) : null;
        const text = t.content.replace(/\n$/, '');
        const node: RTNode = { type: 'codeBlock', attrs: { language } };
        if (text) node.content = [{ type: 'text', text }];
        top().children.push(node);
        break;
      }
      case 'hr':
        top().children.push({ type: 'horizontalRule' });
        break;
      default:
        // thead/tbody open/close carry no information; html_* tokens cannot occur (html: false).
        // Anything else with content is kept as text rather than lost.
        if (t.block && t.nesting === 0 && t.content && t.type !== 'inline') {
          top().children.push({ type: 'paragraph', content: [{ type: 'text', text: t.content }] });
        }
    }
  }
  while (stack.length > 1) pop();
  const blocks = limitDepth(root.children, 2);
  return { type: 'doc', content: blocks.length ? blocks : [emptyParagraph()] };
}

function headingLevel(tag: string): number {
  const n = Number(tag.slice(1));
  return Number.isInteger(n) && n >= 1 && n <= 6 ? n : 1;
}

function listStart(t: Token): number {
  const raw = t.attrGet('start');
  const n = raw === null ? 1 : Number(raw);
  return Number.isInteger(n) && n >= 0 && n <= 999_999_999 ? n : 1;
}

function fenceLanguage(info: string): string | null {
  const first = info.trim().split(/\s+/)[0] ?? '';
  return first === '' ? null : first.slice(0, 100);
}

/** Closes a container, making its content valid for the schema. */
function finish(frame: Frame): RTNode {
  const { node, children } = frame;
  switch (node.type) {
    case 'listItem':
      if (children[0]?.type !== 'paragraph') children.unshift(emptyParagraph());
      break;
    case 'blockquote':
    case 'tableCell':
    case 'tableHeader':
      if (children.length === 0) children.push(emptyParagraph());
      break;
    case 'bulletList':
    case 'orderedList':
      if (children.length === 0) children.push({ type: 'listItem', content: [emptyParagraph()] });
      break;
    case 'table':
      if (children.length === 0) children.push({ type: 'tableRow' });
      break;
  }
  if (children.length) node.content = children;
  return node;
}

function textblock(type: string, inline: RTNode[], attrs?: Record<string, unknown>): RTNode {
  const node: RTNode = attrs ? { type, attrs } : { type };
  const content = trimInline(inline);
  if (content.length) node.content = content;
  return node;
}

/** Drops hard breaks and whitespace at the edges of a textblock (markdown cannot express them). */
function trimInline(nodes: RTNode[]): RTNode[] {
  const out = nodes.slice();
  while (out.length && isBlankInline(out[0]!)) out.shift();
  while (out.length && isBlankInline(out[out.length - 1]!)) out.pop();
  if (out.length && out[0]!.type === 'text') {
    const first = out[0]!;
    if (!hasCode(first)) out[0] = { ...first, text: first.text!.trimStart() };
  }
  const last = out[out.length - 1];
  if (last && last.type === 'text' && !hasCode(last)) {
    out[out.length - 1] = { ...last, text: last.text!.trimEnd() };
  }
  return out;
}

function hasCode(n: RTNode): boolean {
  return !!n.marks?.some((m) => m.type === 'code');
}

function isBlankInline(n: RTNode): boolean {
  return n.type === 'hardBreak' || (n.type === 'text' && !hasCode(n) && (n.text ?? '').trim() === '');
}

function appendParagraphs(out: RTNode[], runs: RTNode[][], images: { node: RTNode }[], keepEmpty: boolean): void {
  // runs[i] is the inline content before images[i]; runs has images.length + 1 entries
  let emitted = 0;
  for (let i = 0; i < runs.length; i++) {
    const para = textblock('paragraph', runs[i]!);
    if (para.content) {
      out.push(para);
      emitted++;
    }
    const img = images[i];
    if (img) {
      out.push(img.node);
      emitted++;
    }
  }
  if (emitted === 0 && keepEmpty) out.push(emptyParagraph());
}

interface InlineResult {
  /** inline content between images (one more entry than images) */
  runs: RTNode[][];
  images: { node: RTNode }[];
}

function convertInline(tokens: Token[]): InlineResult {
  const runs: RTNode[][] = [[]];
  const images: { node: RTNode }[] = [];
  // Open marks; null stands for a link that was refused (its close must still pop).
  const open: (RTMark | null)[] = [];
  const current = (): RTNode[] => runs[runs.length - 1]!;
  const marks = (extra?: RTMark): RTMark[] | undefined => {
    const list = open.filter((m): m is RTMark => m !== null);
    if (extra) list.push(extra);
    if (!list.length) return undefined;
    // A mark type opened twice (e.g. nested emphasis) counts once.
    const seen = new Set<string>();
    return sortMarks(
      list.filter((m) => {
        if (seen.has(m.type)) return false;
        seen.add(m.type);
        return true;
      }),
    );
  };
  const text = (value: string, extra?: RTMark): void => {
    if (!value) return;
    const m = marks(extra);
    pushInline(current(), m ? { type: 'text', marks: m, text: value } : { type: 'text', text: value });
  };
  const popMark = (type: string): void => {
    for (let i = open.length - 1; i >= 0; i--) {
      const m = open[i];
      if ((m === null && type === 'link') || m?.type === type) {
        open.splice(i, 1);
        return;
      }
    }
  };

  for (const t of tokens) {
    switch (t.type) {
      case 'text':
      case 'text_special':
        text(t.content);
        break;
      case 'softbreak':
        text(' ');
        break;
      case 'hardbreak':
        current().push({ type: 'hardBreak' });
        break;
      case 'code_inline':
        text(t.content, { type: 'code' });
        break;
      case 'strong_open':
        open.push({ type: 'bold' });
        break;
      case 'strong_close':
        popMark('bold');
        break;
      case 'em_open':
        open.push({ type: 'italic' });
        break;
      case 'em_close':
        popMark('italic');
        break;
      case 's_open':
        open.push({ type: 'strike' });
        break;
      case 's_close':
        popMark('strike');
        break;
      case 'link_open': {
        const href = safeLinkHref(t.attrGet('href'));
        open.push(href === null ? null : { type: 'link', attrs: { href, target: null, rel: null } });
        break;
      }
      case 'link_close':
        popMark('link');
        break;
      case 'image': {
        const src = safeImageSrc(t.attrGet('src'));
        if (src === null) break; // refused image: dropped
        const alt = plainText(t.children ?? []);
        const title = t.attrGet('title');
        images.push({
          node: { type: 'image', attrs: { src, alt: alt === '' ? null : alt, title: title ? title : null } },
        });
        runs.push([]);
        break;
      }
      default:
        // html_inline cannot occur (html: false); keep any other content as text.
        if (t.content) text(t.content);
    }
  }
  return { runs, images };
}

/** Text of inline tokens without markup (for image alt). */
function plainText(tokens: Token[]): string {
  let out = '';
  for (const t of tokens) {
    if (t.type === 'text' || t.type === 'text_special' || t.type === 'code_inline') out += t.content;
    else if (t.type === 'softbreak' || t.type === 'hardbreak') out += ' ';
    else if (t.type === 'image') out += plainText(t.children ?? []);
  }
  return out.replace(/\s+/g, ' ').trim();
}

/**
 * Keeps documents within MAX_DEPTH (markdown-it itself allows 100 levels of nesting): a
 * container (list, quote, table) that would put its text deeper than FLATTEN_DEPTH is replaced
 * by the leaf blocks it contains. `depth` is the depth the given blocks sit at (doc = 1).
 */
function limitDepth(blocks: RTNode[], depth: number): RTNode[] {
  const out: RTNode[] = [];
  for (const b of blocks) {
    if (isTextblockOrLeaf(b)) {
      out.push(b);
    } else if (depth + 4 > FLATTEN_DEPTH) {
      collectLeafBlocks(b, out);
    } else if (b.type === 'blockquote') {
      out.push({ ...b, content: nonEmpty(limitDepth(b.content ?? [], depth + 1)) });
    } else if (b.type === 'bulletList' || b.type === 'orderedList') {
      const items = (b.content ?? []).map((item) => {
        const content = limitDepth(item.content ?? [], depth + 2);
        if (content[0]?.type !== 'paragraph') content.unshift(emptyParagraph());
        return { ...item, content };
      });
      out.push({ ...b, content: items });
    } else if (b.type === 'table') {
      const rows = (b.content ?? []).map((row) => {
        if (!row.content) return row;
        const cells = row.content.map((cell) => ({
          ...cell,
          content: nonEmpty(limitDepth(cell.content ?? [], depth + 3)),
        }));
        return { ...row, content: cells };
      });
      out.push({ ...b, content: rows });
    } else {
      out.push(b);
    }
  }
  return out;
}

function nonEmpty(blocks: RTNode[]): RTNode[] {
  return blocks.length ? blocks : [emptyParagraph()];
}

function isTextblockOrLeaf(n: RTNode): boolean {
  return n.type === 'paragraph' || n.type === 'heading' || n.type === 'codeBlock' || n.type === 'horizontalRule' || n.type === 'image';
}

function collectLeafBlocks(n: RTNode, out: RTNode[]): void {
  if (isTextblockOrLeaf(n)) {
    // empty paragraphs are only fillers of the containers being flattened
    if (n.type !== 'paragraph' || n.content) out.push(n);
    return;
  }
  for (const c of n.content ?? []) collectLeafBlocks(c, out);
}
