import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** The id column of every decision table in docs/decisions.md, in file order. */
function decisionIds(): string[] {
  const text = readFileSync(path.resolve(import.meta.dirname, '../../docs/decisions.md'), 'utf8');
  return [...text.matchAll(/^\| ([A-Z]+\d+) \|/gm)].map((m) => m[1]!);
}

describe('docs/decisions.md', () => {
  it('names each decision with an id used once in the file', () => {
    const ids = decisionIds();
    expect(ids.length).toBeGreaterThan(100);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });
});
