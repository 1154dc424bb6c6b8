/**
 * Internal shapes of the rich-text document (ProseMirror / TipTap JSON).
 *
 * The public type is `RichTextDoc` (see index.ts); inside this module we work with `RTNode`,
 * which is what a *validated* document looks like.
 */

export type RichTextDoc = { type: 'doc'; content?: unknown[] };

export interface RichTextIssue {
  /** e.g. "body.content[2].attrs.level" */
  path: string;
  message: string;
}

export interface RenderedRichText {
  doc: RichTextDoc;
  html: string;
  markdown: string;
  text: string;
}

export interface RTMark {
  type: string;
  attrs?: Record<string, unknown>;
}

export interface RTNode {
  type: string;
  attrs?: Record<string, unknown>;
  content?: RTNode[];
  marks?: RTMark[];
  text?: string;
}

/** Maximum nesting depth of a document; `doc` itself is depth 1, its blocks depth 2, ... */
export const MAX_DEPTH = 50;

/** Canonical mark order (also the order used for `marks` arrays in documents we produce). */
export const MARK_ORDER = ['link', 'bold', 'italic', 'strike', 'underline', 'code'] as const;

export const BLOCK_TYPES = new Set(['paragraph', 'heading', 'bulletList', 'orderedList', 'blockquote', 'codeBlock', 'horizontalRule', 'image', 'table']);

export const INLINE_TYPES = new Set(['text', 'hardBreak']);

export const ALL_NODE_TYPES = new Set(['doc', ...BLOCK_TYPES, ...INLINE_TYPES, 'listItem', 'tableRow', 'tableHeader', 'tableCell']);

export function markRank(type: string): number {
  const i = (MARK_ORDER as readonly string[]).indexOf(type);
  return i < 0 ? MARK_ORDER.length : i;
}

export function sameMark(a: RTMark, b: RTMark): boolean {
  if (a.type !== b.type) return false;
  const aa = a.attrs ?? {};
  const ba = b.attrs ?? {};
  const keys = new Set([...Object.keys(aa), ...Object.keys(ba)]);
  for (const k of keys) if (aa[k] !== ba[k]) return false;
  return true;
}

export function sameMarkSet(a: readonly RTMark[] | undefined, b: readonly RTMark[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (!sameMark(x[i]!, y[i]!)) return false;
  return true;
}

export function sortMarks(marks: RTMark[]): RTMark[] {
  return marks.slice().sort((a, b) => markRank(a.type) - markRank(b.type));
}

/** An empty paragraph, the filler used where the schema requires a block. */
export function emptyParagraph(): RTNode {
  return { type: 'paragraph' };
}

/**
 * Appends inline nodes, merging adjacent text nodes with the same marks and dropping empty text
 * (what ProseMirror's Fragment does), so that documents have one canonical form.
 */
export function pushInline(out: RTNode[], node: RTNode): void {
  if (node.type === 'text') {
    if (!node.text) return;
    const last = out[out.length - 1];
    if (last && last.type === 'text' && sameMarkSet(last.marks, node.marks)) {
      out[out.length - 1] = { ...last, text: (last.text ?? '') + node.text };
      return;
    }
  }
  out.push(node);
}
