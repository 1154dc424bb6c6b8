import { Schema, type NodeSpec, type MarkSpec } from 'prosemirror-model';

/**
 * ProseMirror schema with TipTap's node and mark names, used as the structural backstop of
 * validateDoc (see validate.ts). It mirrors TipTap's StarterKit + Image (block) + Table, limited
 * to the attributes of decision C1. Differences from TipTap, on purpose:
 * - `code` does not exclude other marks (markdown like **`x`** or [`x`](url) is common), so
 *   every TipTap document is valid here but not the other way round;
 * - attributes TipTap may add (link class/title, image width/height, orderedList type, cell
 *   colwidth) are not part of the schema; validateDoc drops them.
 */
const nodes: Record<string, NodeSpec> = {
  doc: { content: 'block+' },
  paragraph: { group: 'block', content: 'inline*' },
  text: { group: 'inline' },
  heading: {
    group: 'block',
    content: 'inline*',
    defining: true,
    attrs: { level: { default: 1, validate: (v: unknown) => checkInt(v, 1, 6, 'level') } },
  },
  bulletList: { group: 'block list', content: 'listItem+' },
  orderedList: {
    group: 'block list',
    content: 'listItem+',
    attrs: { start: { default: 1, validate: (v: unknown) => checkInt(v, 0, 999_999_999, 'start') } },
  },
  listItem: { content: 'paragraph block*', defining: true },
  blockquote: { group: 'block', content: 'block+', defining: true },
  codeBlock: {
    group: 'block',
    content: 'text*',
    marks: '',
    code: true,
    defining: true,
    attrs: { language: { default: null, validate: 'string|null' } },
  },
  horizontalRule: { group: 'block' },
  hardBreak: { group: 'inline', inline: true, selectable: false },
  image: {
    group: 'block',
    draggable: true,
    attrs: {
      src: { default: null, validate: 'string|null' },
      alt: { default: null, validate: 'string|null' },
      title: { default: null, validate: 'string|null' },
    },
  },
  table: { group: 'block', content: 'tableRow+', tableRole: 'table', isolating: true },
  tableRow: { content: '(tableCell | tableHeader)*', tableRole: 'row' },
  tableHeader: {
    content: 'block+',
    tableRole: 'header_cell',
    isolating: true,
    attrs: {
      colspan: { default: 1, validate: (v: unknown) => checkInt(v, 1, 1000, 'colspan') },
      rowspan: { default: 1, validate: (v: unknown) => checkInt(v, 1, 65534, 'rowspan') },
    },
  },
  tableCell: {
    content: 'block+',
    tableRole: 'cell',
    isolating: true,
    attrs: {
      colspan: { default: 1, validate: (v: unknown) => checkInt(v, 1, 1000, 'colspan') },
      rowspan: { default: 1, validate: (v: unknown) => checkInt(v, 1, 65534, 'rowspan') },
    },
  },
};

// Order matters: it is the canonical mark order (MARK_ORDER in types.ts).
const marks: Record<string, MarkSpec> = {
  link: {
    inclusive: false,
    attrs: {
      href: { validate: 'string' },
      target: { default: null, validate: 'string|null' },
      rel: { default: null, validate: 'string|null' },
    },
  },
  bold: {},
  italic: {},
  strike: {},
  // TipTap v3's StarterKit ships Underline, so editor documents may carry it.
  underline: {},
  code: {},
};

function checkInt(v: unknown, min: number, max: number, name: string): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
  }
}

export const richTextSchema = new Schema({ nodes, marks });
