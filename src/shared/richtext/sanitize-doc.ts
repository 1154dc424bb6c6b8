import { safeImageSrc, safeLinkHref } from './url.js';
import { emptyParagraph, pushInline, type RTNode } from './types.js';

/**
 * Applies the URL policy (url.ts) to a validated document, so that the stored document is as
 * safe as the HTML rendered from it: link marks whose href is refused are removed (the text
 * stays), accepted hrefs/srcs are replaced by their cleaned form, images whose src is refused
 * are removed. Containers left empty get an empty paragraph, to stay valid.
 */
export function sanitizeDocUrls(node: RTNode): RTNode {
  if (node.type === 'text') {
    if (!node.marks?.some((m) => m.type === 'link')) return node;
    const marks = [];
    for (const m of node.marks) {
      if (m.type !== 'link') {
        marks.push(m);
        continue;
      }
      const href = safeLinkHref(m.attrs?.href);
      if (href !== null) marks.push({ ...m, attrs: { ...m.attrs, href } });
    }
    return marks.length ? { type: 'text', marks, text: node.text ?? '' } : { type: 'text', text: node.text ?? '' };
  }
  if (!node.content) return node;
  const inline = node.type === 'paragraph' || node.type === 'heading';
  const content: RTNode[] = [];
  for (const child of node.content) {
    if (child.type === 'image') {
      const src = safeImageSrc(child.attrs?.src);
      if (src === null) continue;
      content.push({ ...child, attrs: { ...child.attrs, src } });
      continue;
    }
    const c = sanitizeDocUrls(child);
    if (inline) pushInline(content, c);
    else content.push(c);
  }
  const out: RTNode = { ...node };
  if (content.length) out.content = content;
  else if (node.type === 'doc' || node.type === 'blockquote' || node.type === 'tableCell' || node.type === 'tableHeader') {
    out.content = [emptyParagraph()];
  } else delete out.content;
  return out;
}
