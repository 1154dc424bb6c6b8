import type BetterSqlite3 from 'better-sqlite3';

/**
 * A JavaScript function that SQLite statements call (decisions HN15). A statement prepared with
 * `functions` (db/prepared.ts) finds them defined on whichever connection runs it: the event
 * loop's writer or reader (defined from `fn`), or the reader thread (sqlite-reader-thread.ts),
 * which imports `module` by its URL and defines its export `exportName`. So `module` imports
 * nothing (the thread has no bundler, and Node strips a TypeScript source's types by itself), and
 * the work it does for a statement run on the thread is done off the event loop.
 */
export interface SqliteFunction {
  /** The SQL name. */
  readonly name: string;
  readonly fn: (...args: never[]) => unknown;
  /** The URL of the module exporting `fn` (its `import.meta.url`). */
  readonly module: string;
  readonly exportName: string;
}

/** What the reader thread needs to define a function itself. */
export type SqliteFunctionSpec = Pick<SqliteFunction, 'name' | 'module' | 'exportName'>;

const defined = new WeakMap<BetterSqlite3.Database, Set<string>>();

/** Defines on `raw` those of `functions` it does not have yet (deterministic: same arguments, same result). */
export function defineSqliteFunctions(raw: BetterSqlite3.Database, functions: readonly SqliteFunction[]): void {
  let names = defined.get(raw);
  if (!names) defined.set(raw, (names = new Set()));
  for (const f of functions) {
    if (names.has(f.name)) continue;
    raw.function(f.name, { deterministic: true }, f.fn as (...args: unknown[]) => unknown);
    names.add(f.name);
  }
}
