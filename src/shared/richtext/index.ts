/**
 * Rich-text bodies (decision C1).
 *
 * The body is stored as a ProseMirror / TipTap document JSON (`{ "type": "doc", "content": [...] }`)
 * with TipTap's node names (doc, paragraph, text, heading, bulletList, orderedList, listItem,
 * blockquote, codeBlock, horizontalRule, hardBreak, image, table, tableRow, tableHeader,
 * tableCell) and mark names (bold, italic, strike, code, link). `bodyMarkdown` is converted to
 * that JSON on save; the HTML, markdown and plain text are rendered from it on write and stored.
 *
 * Safety (see url.ts and to-html.ts): raw HTML in markdown is never passed through; links are
 * limited to http(s), mailto, tel and relative URLs; images to http(s) and relative URLs (no
 * data: URLs at all); every text and attribute is escaped, and the HTML then goes through
 * sanitize-html with a strict allow-list. The returned document has the same URL policy applied.
 */
import { markdownToNodes } from './from-markdown.js';
import { sanitizeDocUrls } from './sanitize-doc.js';
import { docToHtml } from './to-html.js';
import { docToMarkdown } from './to-markdown.js';
import { docToText } from './to-text.js';
import type { RTNode, RenderedRichText, RichTextDoc, RichTextIssue } from './types.js';
import { validateDoc } from './validate.js';

export type { RenderedRichText, RichTextDoc, RichTextIssue } from './types.js';
export { validateDoc } from './validate.js';
export { richTextSchema } from './schema.js';

/** Thrown by renderDoc when it is given something that is not a valid document. */
export class RichTextError extends Error {
  readonly issues: RichTextIssue[];
  constructor(issues: RichTextIssue[]) {
    super(`Invalid rich-text document: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'RichTextError';
    this.issues = issues;
  }
}

/**
 * markdown (CommonMark + GFM tables + strikethrough) -> document JSON. Never throws, and the
 * result always passes validateDoc: should the conversion ever fail or produce an invalid
 * document (a bug), the input is kept as plain-text paragraphs instead.
 */
export function markdownToDoc(markdown: string): RichTextDoc {
  return markdownToValidDoc(markdown);
}

function markdownToValidDoc(markdown: unknown): RichTextDoc {
  const source = typeof markdown === 'string' ? markdown : ''; // guard against untyped callers
  try {
    const checked = validateDoc(markdownToNodes(source), 'body');
    if (checked.ok) return checked.doc;
  } catch {
    // fall through to the plain-text fallback
  }
  const paragraphs: RTNode[] = source
    .split(/\n{2,}/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p !== '')
    .map((p) => ({ type: 'paragraph', content: [{ type: 'text', text: p }] }));
  return { type: 'doc', content: paragraphs.length ? paragraphs : [{ type: 'paragraph' }] };
}

/**
 * document -> sanitized HTML, markdown and plain text. The document is validated first (throws
 * RichTextError if it is not valid: call validateDoc on untrusted input), and the returned `doc`
 * is the normalised document with the URL policy applied: store that one.
 */
export function renderDoc(doc: RichTextDoc): RenderedRichText {
  const checked = validateDoc(doc, 'body');
  if (!checked.ok) throw new RichTextError(checked.issues);
  const body = renderValidDoc(checked.doc);
  return { ...body, markdown: docToMarkdown(body.doc as RTNode) };
}

/**
 * What a write stores: the document, its HTML and its plain text. Markdown is rendered only where
 * it is served (llms.txt outputs), not on every write: for a 1 MB body it was a fifth of the
 * rendering time and of the garbage the renderer's garbage collector had to clear.
 */
export type RenderedBody = Omit<RenderedRichText, 'markdown'>;

/** Renders a document that validateDoc has just returned (nobody else holds a reference to it). */
function renderValidDoc(doc: RichTextDoc): RenderedBody {
  const safe = sanitizeDocUrls(doc as RTNode);
  return { doc: safe as RichTextDoc, html: docToHtml(safe), text: docToText(safe) };
}

/**
 * For services: an input with `body` (document JSON) or `bodyMarkdown` (string) -> the rendered
 * result. Both given: an issue. Neither given (undefined or null): null.
 */
export function richTextFromInput(input: {
  body?: unknown;
  bodyMarkdown?: string | null;
}): { ok: true; value: RenderedBody } | { ok: false; issues: RichTextIssue[] } | null {
  const hasBody = input.body !== undefined && input.body !== null;
  const hasMarkdown = input.bodyMarkdown !== undefined && input.bodyMarkdown !== null;
  if (hasBody && hasMarkdown) {
    return { ok: false, issues: [{ path: 'body', message: 'Send either body or bodyMarkdown, not both' }] };
  }
  if (hasMarkdown) {
    if (typeof input.bodyMarkdown !== 'string') {
      return { ok: false, issues: [{ path: 'bodyMarkdown', message: 'must be a string' }] };
    }
    return { ok: true, value: renderValidDoc(markdownToValidDoc(input.bodyMarkdown)) };
  }
  if (hasBody) {
    const checked = validateDoc(input.body, 'body');
    if (!checked.ok) return { ok: false, issues: checked.issues };
    return { ok: true, value: renderValidDoc(checked.doc) };
  }
  return null;
}

/** markdown -> sanitized HTML (markdownToDoc, then renderDoc). */
export function markdownToHtml(markdown: string): string {
  return renderValidDoc(markdownToValidDoc(markdown)).html;
}
