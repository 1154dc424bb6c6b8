import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every module of src/ with the src/ modules it imports (type-only imports included unless
 * `withTypes` is false: a cycle of types is still a knot, but a type reads no data).
 */
function importGraph(withTypes = true): Map<string, string[]> {
  const root = path.resolve(import.meta.dirname, '../../src');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const targets = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'|(?:^|\n)\s*import\s+'(\.{1,2}\/[^']+)'/g)]
      .filter((m) => withTypes || !/^\s*(?:import|export)\s+type\b/.test(m[0]))
      .map((m) => path.join(path.dirname(file), (m[1] ?? m[2])!).replace(/\.js$/, '.ts'));
    graph.set(file, targets);
  }
  return graph;
}

/** Imports of a module's repository from outside its folder (modules/<group>/<group>.repository.ts). */
function repositoryReaders(graph: Map<string, string[]>): string[] {
  const folder = (file: string) => file.split('/').slice(0, 2).join('/');
  return [...graph].flatMap(([file, targets]) =>
    targets.filter((t) => /^modules\/[^/]+\/[^/]+\.repository\.ts$/.test(t) && folder(t) !== folder(file)).map((t) => `${file} -> ${t}`),
  );
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe('module graph of src/', () => {
  it('has no import cycles', () => {
    expect(cycles(importGraph()).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('keeps db/ free of imports from shared/, plugins/ and modules/', () => {
    const offending = [...importGraph()]
      .filter(([file]) => file.startsWith('db/'))
      .flatMap(([file, targets]) => targets.filter((t) => /^(shared|plugins|modules)\//.test(t)).map((t) => `${file} -> ${t}`));
    expect(offending).toEqual([]);
  });

  it("keeps each module out of other modules' repositories: their data is read through the small read interface they export", () => {
    expect(repositoryReaders(importGraph(false))).toEqual([]);
  });

  it('finds imports (the check itself works)', () => {
    const graph = importGraph();
    expect(graph.get('app.ts')).toContain('db/connect.ts');
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
        ]),
      ),
    ).toHaveLength(1);
    expect(repositoryReaders(new Map([['modules/seo/x.ts', ['modules/site-blocks/site-blocks.repository.ts', 'modules/seo/seo.repository.ts']]]))).toEqual([
      'modules/seo/x.ts -> modules/site-blocks/site-blocks.repository.ts',
    ]);
  });
});
