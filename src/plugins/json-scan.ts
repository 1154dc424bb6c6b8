/**
 * One pass over a JSON text, before anything parses it (decisions H12, HN5, HN9): it finds
 * objects and arrays nested deeper than the limit and objects with too many members, and, for a
 * large body, where the text can be cut so that it is parsed a piece at a time. The pass keeps
 * its state between calls, so a large body is scanned in slices with turns of the event loop
 * between them. Outside strings a `:` only ever follows an object's key, and `,`, `{`, `[`,
 * `}` and `]` are structure; strings are skipped with indexOf.
 */

/** Characters of JSON text parsed by one `JSON.parse` call when a body is parsed in pieces (about 0.3-1 ms here). */
export const PIECE_CHARS = 32 * 1024;

/**
 * An object or array parsed member by member: `parts` cover the text between its brackets
 * exactly, each either a run of members parsed together (`from`-`to`, without the separating
 * commas) or one member whose value is itself such a container (`from` is the member's start,
 * `to` the separator after it).
 */
export interface Container {
  open: number;
  close: number;
  object: boolean;
  parts: Part[];
}
type Part = { from: number; to: number; child?: Container };

interface Frame {
  open: number;
  object: boolean;
  keys: number;
  /** The separator (`,` or the opening bracket) the current run of members starts after. */
  runStart: number;
  /** The last separator seen at this level. */
  lastSep: number;
  /** The last part is a container member whose separator after it is not yet seen. */
  openChild: Part | null;
  parts: Part[] | null;
}

export type ShapeProblem = 'deep' | 'wide';

export interface JsonScan {
  at: number;
  stack: Frame[];
  /** The top-level value when it is cut into parts (else the text is parsed whole). */
  root: Container | null;
  problem: ShapeProblem | null;
  /** Brackets that do not match: left to the parser, which refuses the text as it always did. */
  malformed: boolean;
}

export function startScan(): JsonScan {
  return { at: 0, stack: [], root: null, problem: null, malformed: false };
}

/**
 * Scans `text` from where `scan` stopped up to `end` (or the first problem). Parts are recorded
 * only where a run of members reaches PIECE_CHARS, so a small body costs the bare scan. With
 * `partial`, `text` is what has arrived of a body so far (decisions HN12): the scan stops before
 * a string that is not closed yet and resumes there when called again with more text.
 */
export function scanUntil(scan: JsonScan, text: string, end: number, maxDepth: number, maxKeys: number, partial = false): void {
  const stack = scan.stack;
  let i = scan.at;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const close = stringEnd(text, i);
      if (partial && close >= text.length) break;
      i = close;
    } else if (c === 58 /* : */) {
      const top = stack[stack.length - 1];
      if (top && ++top.keys > maxKeys) {
        scan.problem = 'wide';
        break;
      }
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (stack.length >= maxDepth) {
        scan.problem = 'deep';
        break;
      }
      stack.push({ open: i, object: c === 123, keys: 0, runStart: i, lastSep: i, openChild: null, parts: null });
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1];
      if (!top) continue;
      top.lastSep = i;
      if (top.openChild) {
        top.openChild.to = i;
        top.openChild = null;
        top.runStart = i;
      } else if (i - top.runStart >= PIECE_CHARS) {
        (top.parts ??= []).push({ from: top.runStart + 1, to: i });
        top.runStart = i;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      const top = stack.pop();
      if (!top || top.object !== (c === 125)) {
        scan.malformed = true;
        break;
      }
      if (top.openChild) top.openChild.to = i;
      else if (top.parts) top.parts.push({ from: top.runStart + 1, to: i });
      if (!top.parts) continue;
      // Cut into parts: a member of its parent, parsed on its own.
      const container: Container = { open: top.open, close: i, object: top.object, parts: top.parts };
      const parent = stack[stack.length - 1];
      if (!parent) {
        scan.root = container;
        continue;
      }
      if (parent.openChild) {
        // Two values with no comma between them: not JSON.
        scan.malformed = true;
        break;
      }
      parent.parts ??= [];
      if (parent.lastSep > parent.runStart) parent.parts.push({ from: parent.runStart + 1, to: parent.lastSep });
      const part: Part = { from: parent.lastSep + 1, to: -1, child: container };
      parent.parts.push(part);
      parent.openChild = part;
    }
  }
  scan.at = Math.max(i, scan.at);
  if (!partial && end >= text.length && !scan.problem && !scan.malformed && stack.length) scan.malformed = true;
}

/**
 * What is wrong with the shape of the JSON text (see scanUntil): objects and arrays nested
 * deeper than `maxDepth`, or an object with more than `maxKeys` members.
 */
export function jsonShapeProblem(text: string, maxDepth: number, maxKeys = Number.POSITIVE_INFINITY): ShapeProblem | null {
  const scan = startScan();
  scanUntil(scan, text, text.length, maxDepth, maxKeys);
  return scan.problem;
}

/**
 * The index of the quote closing the string opened at `open` (or the text's end): found with
 * indexOf, not character by character, as a 1 MB body is mostly one string (5 ms -> 0.1 ms).
 * A quote preceded by an odd number of backslashes is escaped.
 */
function stringEnd(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return text.length;
}

const WHITESPACE = /^[ \t\n\r]*$/;

/** The text is not what the pieces said: the caller parses it whole, for the parser's own answer. */
class NotInPieces extends Error {}

/** `buildInPieces` found a piece it cannot vouch for (any other error is the parser's own). */
/**
 * The value of a scanned text whose top level was cut into parts, built a piece at a time:
 * each run of members by `parse` (the JSON parser with its prototype checks), a turn of the
 * event loop whenever `slice` says the slice is used up. The result is what parsing the whole
 * text gives; anything the pieces cannot vouch for (stray characters between them, an empty
 * member, a key `__proto__`, a `constructor` holding `prototype`) throws NotInPieces and the
 * caller parses the text whole instead (which then refuses it as it always did).
 */
export async function buildInPieces(text: string, root: Container, parse: (text: string) => unknown, slice: () => Promise<void> | undefined): Promise<unknown> {
  if (!WHITESPACE.test(text.slice(0, root.open)) || !WHITESPACE.test(text.slice(root.close + 1))) throw new NotInPieces();
  return build(root);

  async function build(c: Container): Promise<unknown> {
    const out: Record<string, unknown> | unknown[] = c.object ? {} : [];
    let expected = c.open + 1;
    for (const part of c.parts) {
      const wait = slice();
      if (wait) await wait;
      if (part.from !== expected || part.to < part.from) throw new NotInPieces();
      expected = part.to + 1;
      if (part.child) {
        const child = part.child;
        if (!WHITESPACE.test(text.slice(child.close + 1, part.to))) throw new NotInPieces();
        const head = text.slice(part.from, child.open);
        const value = await build(child);
        if (!c.object) {
          if (!WHITESPACE.test(head)) throw new NotInPieces();
          (out as unknown[]).push(value);
          continue;
        }
        const colon = head.lastIndexOf(':');
        if (colon === -1 || !WHITESPACE.test(head.slice(colon + 1))) throw new NotInPieces();
        const key = parse(head.slice(0, colon));
        if (typeof key !== 'string' || key === '__proto__') throw new NotInPieces();
        if (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype')) throw new NotInPieces();
        (out as Record<string, unknown>)[key] = value;
        continue;
      }
      const run = text.slice(part.from, part.to);
      // `[1,,2]` or a trailing comma would leave an empty run, which parses as nothing.
      if (WHITESPACE.test(run)) throw new NotInPieces();
      const parsed = parse(c.object ? `{${run}}` : `[${run}]`) as Record<string, unknown> | unknown[];
      if (Array.isArray(parsed)) for (const v of parsed) (out as unknown[]).push(v);
      else for (const k of Object.keys(parsed)) (out as Record<string, unknown>)[k] = parsed[k];
    }
    if (expected !== c.close + 1) throw new NotInPieces();
    return out;
  }
}
