import type { RTNode } from './types.js';

/**
 * document -> plain text for full-text search and excerpts: one line per textblock (paragraph,
 * heading, code block), image alt texts, one line per table row (cells separated by spaces);
 * whitespace collapsed within each line, empty lines left out, no markup at all.
 */
export function docToText(doc: RTNode): string {
  const lines: string[] = [];
  collect(doc.content ?? [], lines);
  return lines.join('\n');
}

function inlineText(nodes: readonly RTNode[] | undefined): string {
  let s = '';
  for (const n of nodes ?? []) {
    if (n.type === 'text' && typeof n.text === 'string') s += n.text;
    else if (n.type === 'hardBreak') s += ' ';
  }
  return collapse(s);
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function collect(blocks: readonly RTNode[], lines: string[]): void {
  for (const b of blocks) {
    switch (b.type) {
      case 'paragraph':
      case 'heading':
      case 'codeBlock': {
        const t = inlineText(b.content);
        if (t) lines.push(t);
        break;
      }
      case 'image': {
        const alt = b.attrs?.alt;
        if (typeof alt === 'string' && collapse(alt)) lines.push(collapse(alt));
        break;
      }
      case 'table':
        for (const row of b.content ?? []) {
          const cells: string[] = [];
          for (const cell of row.content ?? []) {
            const inner: string[] = [];
            collect(cell.content ?? [], inner);
            const t = collapse(inner.join(' '));
            if (t) cells.push(t);
          }
          if (cells.length) lines.push(cells.join(' '));
        }
        break;
      case 'horizontalRule':
        break;
      default:
        collect(b.content ?? [], lines);
    }
  }
}
