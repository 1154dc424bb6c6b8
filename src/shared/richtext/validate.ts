import { richTextSchema } from './schema.js';
import {
  ALL_NODE_TYPES,
  BLOCK_TYPES,
  INLINE_TYPES,
  MAX_DEPTH,
  emptyParagraph,
  pushInline,
  sortMarks,
  type RTMark,
  type RTNode,
  type RichTextDoc,
  type RichTextIssue,
} from './types.js';

/** More issues than this are not useful to a client; stop collecting. */
const MAX_ISSUES = 50;
const MAX_LANGUAGE_LENGTH = 100;

const KNOWN_NODE_TYPES = ALL_NODE_TYPES;
const KNOWN_MARK_TYPES = new Set(['bold', 'italic', 'strike', 'underline', 'code', 'link']);

const BLOCK_LIST = 'a block node (paragraph, heading, bulletList, orderedList, blockquote, codeBlock, horizontalRule, image, table)';

type ChildKind = 'block' | 'inline' | 'listItem' | 'tableRow' | 'cell' | 'codeText' | 'none';

/** What each node type may contain. `min` is the minimum number of children. */
const CONTENT: Record<string, { kind: ChildKind; min: number }> = {
  doc: { kind: 'block', min: 0 }, // an empty doc is accepted and normalised to one empty paragraph
  paragraph: { kind: 'inline', min: 0 },
  heading: { kind: 'inline', min: 0 },
  bulletList: { kind: 'listItem', min: 1 },
  orderedList: { kind: 'listItem', min: 1 },
  listItem: { kind: 'block', min: 1 }, // plus: first child must be a paragraph
  blockquote: { kind: 'block', min: 1 },
  codeBlock: { kind: 'codeText', min: 0 },
  table: { kind: 'tableRow', min: 1 },
  tableRow: { kind: 'cell', min: 0 },
  tableHeader: { kind: 'block', min: 1 },
  tableCell: { kind: 'block', min: 1 },
  text: { kind: 'none', min: 0 },
  hardBreak: { kind: 'none', min: 0 },
  horizontalRule: { kind: 'none', min: 0 },
  image: { kind: 'none', min: 0 },
};

function kindAccepts(kind: ChildKind, type: string): boolean {
  switch (kind) {
    case 'block':
      return BLOCK_TYPES.has(type);
    case 'inline':
      return INLINE_TYPES.has(type);
    case 'listItem':
      return type === 'listItem';
    case 'tableRow':
      return type === 'tableRow';
    case 'cell':
      return type === 'tableCell' || type === 'tableHeader';
    case 'codeText':
      return type === 'text';
    case 'none':
      return false;
  }
}

function kindDescription(kind: ChildKind): string {
  switch (kind) {
    case 'block':
      return BLOCK_LIST;
    case 'inline':
      return 'inline content (text, hardBreak)';
    case 'listItem':
      return 'listItem nodes';
    case 'tableRow':
      return 'tableRow nodes';
    case 'cell':
      return 'tableCell or tableHeader nodes';
    case 'codeText':
      return 'text nodes without marks';
    case 'none':
      return 'no content';
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

class Issues {
  readonly list: RichTextIssue[] = [];
  add(path: string, message: string): void {
    if (this.list.length < MAX_ISSUES) this.list.push({ path, message });
  }
  get full(): boolean {
    return this.list.length >= MAX_ISSUES;
  }
}

function intAttr(attrs: Record<string, unknown>, name: string, def: number, min: number, max: number, path: string, issues: Issues): number {
  const v = attrs[name];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    issues.add(`${path}.attrs.${name}`, `must be an integer from ${min} to ${max}`);
    return def;
  }
  return v;
}

function stringOrNullAttr(attrs: Record<string, unknown>, name: string, path: string, issues: Issues): string | null {
  const v = attrs[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') {
    issues.add(`${path}.attrs.${name}`, `must be a string or null, got ${describe(v)}`);
    return null;
  }
  return v;
}

/** Returns the normalised attrs of a node type (only the attributes of the schema, defaults filled). */
function nodeAttrs(type: string, raw: Record<string, unknown>, path: string, issues: Issues): Record<string, unknown> | undefined {
  switch (type) {
    case 'heading':
      return { level: intAttr(raw, 'level', 1, 1, 6, path, issues) };
    case 'orderedList':
      return { start: intAttr(raw, 'start', 1, 0, 999_999_999, path, issues) };
    case 'codeBlock': {
      let language = stringOrNullAttr(raw, 'language', path, issues);
      if (language !== null) {
        language = language.trim();
        if (language.length > MAX_LANGUAGE_LENGTH) {
          issues.add(`${path}.attrs.language`, `must be at most ${MAX_LANGUAGE_LENGTH} characters`);
        } else if (/\s/.test(language)) {
          issues.add(`${path}.attrs.language`, 'must not contain whitespace');
        }
        if (language === '') language = null;
      }
      return { language };
    }
    case 'image':
      return {
        src: stringOrNullAttr(raw, 'src', path, issues),
        alt: stringOrNullAttr(raw, 'alt', path, issues),
        title: stringOrNullAttr(raw, 'title', path, issues),
      };
    case 'tableCell':
    case 'tableHeader':
      return {
        colspan: intAttr(raw, 'colspan', 1, 1, 1000, path, issues),
        rowspan: intAttr(raw, 'rowspan', 1, 1, 65534, path, issues),
      };
    default:
      return undefined;
  }
}

function validateMarks(raw: unknown, path: string, issues: Issues, inCode: boolean): RTMark[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    issues.add(`${path}.marks`, `must be an array, got ${describe(raw)}`);
    return [];
  }
  if (inCode && raw.length > 0) {
    issues.add(`${path}.marks`, 'text in a codeBlock cannot have marks');
    return [];
  }
  const out: RTMark[] = [];
  const seen = new Set<string>();
  raw.forEach((m, i) => {
    const mp = `${path}.marks[${i}]`;
    if (!isPlainObject(m)) {
      issues.add(mp, `must be an object, got ${describe(m)}`);
      return;
    }
    const type = m.type;
    if (typeof type !== 'string') {
      issues.add(`${mp}.type`, 'must be a string');
      return;
    }
    if (!KNOWN_MARK_TYPES.has(type)) {
      issues.add(`${mp}.type`, `unknown mark type "${type.slice(0, 50)}"`);
      return;
    }
    if (seen.has(type)) {
      issues.add(mp, `duplicate mark "${type}"`);
      return;
    }
    seen.add(type);
    const rawAttrs = m.attrs;
    if (rawAttrs !== undefined && rawAttrs !== null && !isPlainObject(rawAttrs)) {
      issues.add(`${mp}.attrs`, `must be an object, got ${describe(rawAttrs)}`);
      return;
    }
    if (type === 'link') {
      const a = (rawAttrs ?? {}) as Record<string, unknown>;
      const href = a.href;
      if (typeof href !== 'string' || href.trim() === '') {
        issues.add(`${mp}.attrs.href`, 'must be a non-empty string');
        return;
      }
      out.push({
        type,
        attrs: {
          href,
          target: stringOrNullAttr(a, 'target', mp, issues),
          rel: stringOrNullAttr(a, 'rel', mp, issues),
        },
      });
    } else {
      out.push({ type });
    }
  });
  return sortMarks(out);
}

function validateNode(input: unknown, path: string, depth: number, issues: Issues, parentType: string): RTNode | null {
  if (issues.full) return null;
  if (!isPlainObject(input)) {
    issues.add(path, `must be a node object, got ${describe(input)}`);
    return null;
  }
  const type = input.type;
  if (typeof type !== 'string') {
    issues.add(`${path}.type`, 'must be a string');
    return null;
  }
  if (!KNOWN_NODE_TYPES.has(type)) {
    issues.add(`${path}.type`, `unknown node type "${type.slice(0, 50)}"`);
    return null;
  }
  if (depth > MAX_DEPTH) {
    issues.add(path, `the document is nested deeper than ${MAX_DEPTH} levels`);
    return null;
  }

  const rawAttrs = input.attrs;
  let attrSource: Record<string, unknown> = {};
  if (rawAttrs !== undefined && rawAttrs !== null) {
    if (isPlainObject(rawAttrs)) attrSource = rawAttrs;
    else issues.add(`${path}.attrs`, `must be an object, got ${describe(rawAttrs)}`);
  }
  const attrs = nodeAttrs(type, attrSource, path, issues);

  const node: RTNode = { type };
  if (attrs) node.attrs = attrs;

  // marks: only on inline nodes
  const rawMarks = input.marks;
  if (INLINE_TYPES.has(type)) {
    const marks = validateMarks(rawMarks, path, issues, parentType === 'codeBlock');
    if (marks.length) node.marks = marks;
  } else if (rawMarks !== undefined && rawMarks !== null && !(Array.isArray(rawMarks) && rawMarks.length === 0)) {
    issues.add(`${path}.marks`, `marks are only allowed on text and hardBreak, not on ${type}`);
  }

  if (type === 'text') {
    const text = input.text;
    if (typeof text !== 'string' || text === '') {
      issues.add(`${path}.text`, 'a text node must have a non-empty string "text"');
      return null;
    }
    node.text = text;
  }

  const spec = CONTENT[type]!;
  const rawContent = input.content;
  let items: unknown[] = [];
  if (rawContent !== undefined && rawContent !== null) {
    if (!Array.isArray(rawContent)) {
      issues.add(`${path}.content`, `must be an array, got ${describe(rawContent)}`);
      return node;
    }
    items = rawContent;
  }
  if (spec.kind === 'none') {
    if (items.length > 0) issues.add(`${path}.content`, `${type} cannot have content`);
    return node;
  }

  const children: RTNode[] = [];
  items.forEach((item, i) => {
    if (issues.full) return;
    const cp = `${path}.content[${i}]`;
    // Check the child's kind before descending, so the issue names the misplaced node.
    if (isPlainObject(item) && typeof item.type === 'string' && KNOWN_NODE_TYPES.has(item.type)) {
      const ct = item.type;
      if (!kindAccepts(spec.kind, ct)) {
        const where = type === 'doc' ? 'directly in doc' : `in ${type}`;
        issues.add(cp, `${ct} is not allowed ${where}; expected ${kindDescription(spec.kind)}`);
        return;
      }
      if (type === 'listItem' && i === 0 && ct !== 'paragraph') {
        issues.add(cp, `the first child of a listItem must be a paragraph, got ${ct}`);
        return;
      }
    }
    const child = validateNode(item, cp, depth + 1, issues, type);
    if (!child) return;
    if (spec.kind === 'inline' || spec.kind === 'codeText') pushInline(children, child);
    else children.push(child);
  });

  if (items.length < spec.min) {
    issues.add(`${path}.content`, `${type} must contain at least ${spec.min === 1 ? 'one' : spec.min} ${kindDescription(spec.kind)}`);
  }
  if (type === 'doc' && children.length === 0 && items.length === 0) children.push(emptyParagraph());
  if (children.length) node.content = children;
  return node;
}

export type ValidateResult = { ok: true; doc: RichTextDoc } | { ok: false; issues: RichTextIssue[] };

/**
 * Validates untrusted JSON as a document of the schema and returns a normalised copy:
 * attributes limited to those of the schema with defaults filled in, marks sorted and
 * de-duplicated, adjacent text nodes with the same marks merged, an empty doc turned into one
 * empty paragraph. Unknown attributes are dropped silently (TipTap editors may add some);
 * unknown node or mark types, bad attribute values and misplaced nodes are issues.
 * Never throws.
 */
export function validateDoc(input: unknown, basePath = 'body'): ValidateResult {
  const issues = new Issues();
  let node: RTNode | null = null;
  try {
    if (!isPlainObject(input)) {
      issues.add(basePath, `must be a document object ({ "type": "doc", "content": [...] }), got ${describe(input)}`);
    } else if (input.type !== 'doc') {
      issues.add(`${basePath}.type`, 'must be "doc"');
    } else {
      node = validateNode(input, basePath, 1, issues, '');
    }
  } catch (err) {
    // Defensive: exotic inputs (getters that throw, proxies, ...) must not escape as exceptions.
    issues.add(basePath, `is not a valid document (${err instanceof Error ? err.message : 'invalid input'})`);
    node = null;
  }
  if (issues.list.length > 0 || !node) {
    if (issues.list.length === 0) issues.add(basePath, 'is not a valid document');
    return { ok: false, issues: issues.list };
  }
  const structural = schemaCheck(node, basePath);
  if (structural) return { ok: false, issues: [structural] };
  return { ok: true, doc: node as RichTextDoc };
}

/**
 * Second, independent check with prosemirror-model (the same rules TipTap's editor enforces).
 * Our own walk above should already have caught everything; if ProseMirror disagrees, report
 * the top-level block that fails.
 */
function schemaCheck(doc: RTNode, basePath: string): RichTextIssue | null {
  try {
    richTextSchema.nodeFromJSON(doc).check();
    return null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const blocks = doc.content ?? [];
    for (let i = 0; i < blocks.length; i++) {
      try {
        richTextSchema.nodeFromJSON(blocks[i]).check();
      } catch (inner) {
        return { path: `${basePath}.content[${i}]`, message: inner instanceof Error ? inner.message : message };
      }
    }
    return { path: basePath, message };
  }
}
