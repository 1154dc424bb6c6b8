import { markRank, sameMark, type RTMark, type RTNode } from './types.js';

/**
 * Helpers for serialising marks as nested tags/delimiters: marks that stay active across
 * neighbouring nodes are kept open, and when several marks open at once, the one that extends
 * furthest is opened first (outermost), so it does not have to be closed and reopened.
 */

export function hasMark(marks: readonly RTMark[] | undefined, mark: RTMark): boolean {
  return !!marks && marks.some((m) => sameMark(m, mark));
}

/** Number of leading entries of `stack` that are all contained in `marks`. */
export function keptPrefix(stack: readonly RTMark[], marks: readonly RTMark[]): number {
  let k = 0;
  while (k < stack.length && hasMark(marks, stack[k]!)) k++;
  return k;
}

/**
 * Marks of `marks` not yet in `stack`, in opening order: furthest-reaching first (counted over
 * the following inline nodes, hard breaks being transparent), then canonical order.
 */
export function marksToOpen(
  stack: readonly RTMark[],
  marks: readonly RTMark[],
  nodes: readonly RTNode[],
  index: number,
  marksOf: (n: RTNode) => readonly RTMark[],
): RTMark[] {
  const fresh = marks.filter((m) => !hasMark(stack, m));
  if (fresh.length < 2) return fresh;
  const extent = (m: RTMark): number => {
    let j = index;
    while (j < nodes.length) {
      const n = nodes[j]!;
      if (n.type !== 'hardBreak' && !hasMark(marksOf(n), m)) break;
      j++;
    }
    return j - index;
  };
  return fresh
    .map((m) => ({ m, e: extent(m) }))
    .sort((a, b) => b.e - a.e || markRank(a.m.type) - markRank(b.m.type))
    .map((x) => x.m);
}
