import { PostgresAdapter, type CompiledQuery, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { SqliteFunction } from './sqlite-functions.js';
import type { DB, Executor } from './types.js';

/**
 * Hot read queries built with Kysely once per shape and then run with new values, instead of
 * building and compiling the same statement on every request (about 25 µs per statement, a
 * fifth of a detail read's own CPU time at 10,000 posts; see docs/decisions.md P16).
 *
 * `build` receives `p`, the arguments with every bindable value replaced by a marker: Kysely
 * puts the markers into the compiled parameter list like any value, and each run swaps them for
 * that run's values. What `build` decides on (which filters are present, a sort column, a
 * boolean that picks `is` or `is not`) must not be a marker: an `undefined` argument stays
 * `undefined`, arrays become arrays of markers of the same length, and the keys named in
 * `structural` are passed as they are. The cache key is the shape: which arguments are present,
 * array lengths, the structural values, and the dialect (the executor's adapter).
 */
type Args = Record<string, unknown>;

const MARKER = Symbol('cairn.param');
/**
 * Shapes kept per query and dialect. Filters and list lengths combine into many shapes a client
 * can choose; past this many the oldest is dropped (it is rebuilt if it comes back).
 */
const MAX_SHAPES = 256;

/**
 * The statements of this module's queries that PostgreSQL sessions keep parsed and planned
 * (named statements, decisions PF5), by their SQL text: the pool's clients (db/connect.ts) send a
 * text found here as a named statement, so each connection parses it once and then only binds
 * and executes it; any other text is parsed on every run as before. Capped, because every
 * connection keeps each named statement it ran (with its plan) until it closes: past the cap a new
 * shape runs unnamed.
 */
export const NAMED_STATEMENT_CAP = 400;
const namedStatements = new Map<string, string>();

/** The name PostgreSQL sessions keep `sql` under, if it is a prepared query's statement. */
export function statementName(sql: string): string | undefined {
  return namedStatements.get(sql);
}

function nameStatement(sql: string): void {
  if (namedStatements.size < NAMED_STATEMENT_CAP && !namedStatements.has(sql)) namedStatements.set(sql, `cairn_${namedStatements.size + 1}`);
}

interface Marker {
  readonly [MARKER]: true;
  readonly key: string;
  readonly index: number | undefined;
}

function marker(key: string, index?: number): Marker {
  return Object.freeze({ [MARKER]: true as const, key, index });
}

function isMarker(value: unknown): value is Marker {
  return typeof value === 'object' && value !== null && MARKER in value;
}

interface Plan {
  sql: string;
  query: CompiledQuery['query'];
  /** Per compiled parameter: where its value comes from. */
  slots: Array<{ key: string; index: number | undefined } | { constant: unknown }>;
}

export interface PreparedQuery<A extends Args, R> {
  /** Runs the statement with these arguments; rows as Kysely returns them. */
  execute(db: Executor, args: A): Promise<R[]>;
  executeTakeFirst(db: Executor, args: A): Promise<R | undefined>;
  /** The compiled statement for these arguments (for tests and the bench's parity check). */
  compile(db: Executor, args: A): CompiledQuery;
}

const RUN_OPTIONS = Symbol('how SQLite runs the statement');
interface RunOptions {
  offLoop?: boolean;
  /** With offLoop: a read that continues a request the reader threads already answered once. */
  followUp?: boolean;
  functions?: readonly SqliteFunction[];
}

/** Whether a compiled statement was prepared with `offLoop` (the SQLite driver runs it on its reader thread). */
export function offLoop(query: CompiledQuery): boolean {
  return (query as { [RUN_OPTIONS]?: RunOptions })[RUN_OPTIONS]?.offLoop === true;
}

/** Whether a compiled statement was prepared with `followUp` (it goes before reads that start a request). */
export function followUp(query: CompiledQuery): boolean {
  return (query as { [RUN_OPTIONS]?: RunOptions })[RUN_OPTIONS]?.followUp === true;
}

/** The JavaScript functions a compiled statement calls on SQLite (prepared with `functions`). */
export function sqliteFunctions(query: CompiledQuery): readonly SqliteFunction[] | undefined {
  return (query as { [RUN_OPTIONS]?: RunOptions })[RUN_OPTIONS]?.functions;
}

/**
 * `structural`: arguments that change the SQL (a list's length is always structural).
 * `offLoop`: a read that may take milliseconds no slicing can cut (a full-text match over long
 * posts): outside a transaction, SQLite runs it on a thread of its own and the event loop only
 * waits for its rows (decisions HN13). PostgreSQL runs every statement in its own process anyway.
 * `followUp`: such a read that a request makes after its first one was answered (a search's
 * highlights): it runs before the reads that start other requests (decisions PF20).
 * `functions`: the JavaScript functions the statement calls on SQLite (db/sqlite-functions.ts),
 * defined on the connection or thread that runs it.
 */
export function prepared<A extends Args, R>(
  build: (db: Kysely<DB>, p: A) => Compilable<R> | RawBuilder<R>,
  options: { structural?: ReadonlyArray<keyof A & string> } & RunOptions = {},
): PreparedQuery<A, R> {
  const structural = new Set<string>(options.structural ?? []);
  const runOptions: RunOptions | null =
    options.offLoop || options.functions ? { offLoop: options.offLoop, followUp: options.followUp, functions: options.functions } : null;
  // Per adapter (one per dialect instance; transactions share their database's), per shape.
  const plans = new WeakMap<object, Map<string, Plan>>();

  function shapeOf(args: A): string {
    let key = '';
    for (const name of Object.keys(args).sort()) {
      const value = args[name];
      if (value === undefined) continue;
      key += structural.has(name) ? `${name}=${JSON.stringify(value)};` : Array.isArray(value) ? `${name}[${value.length}];` : `${name};`;
    }
    return key;
  }

  function planFor(db: Executor, args: A): Plan {
    const adapter = db.getExecutor().adapter as object;
    let byShape = plans.get(adapter);
    if (!byShape) plans.set(adapter, (byShape = new Map()));
    const shape = shapeOf(args);
    let plan = byShape.get(shape);
    if (plan) return plan;
    const p: Args = {};
    for (const [name, value] of Object.entries(args)) {
      if (value === undefined) continue;
      p[name] = structural.has(name) ? value : Array.isArray(value) ? value.map((_, i) => marker(name, i)) : marker(name);
    }
    // A query builder compiles by itself; a raw `sql` template needs the database for its dialect.
    const compiled = build(db as Kysely<DB>, p as A).compile(db);
    plan = {
      sql: compiled.sql,
      query: compiled.query,
      slots: compiled.parameters.map((value) => (isMarker(value) ? { key: value.key, index: value.index } : { constant: value })),
    };
    if (byShape.size >= MAX_SHAPES) byShape.delete(byShape.keys().next().value!);
    byShape.set(shape, plan);
    if (adapter instanceof PostgresAdapter) nameStatement(plan.sql);
    return plan;
  }

  function compile(db: Executor, args: A): CompiledQuery {
    const plan = planFor(db, args);
    const parameters = plan.slots.map((slot) => {
      if ('constant' in slot) return slot.constant;
      const value = args[slot.key];
      return slot.index === undefined ? value : (value as unknown[])[slot.index];
    });
    const compiled = { sql: plan.sql, query: plan.query, parameters, queryId: { queryId: plan.sql } } as CompiledQuery;
    if (runOptions) (compiled as { [RUN_OPTIONS]?: RunOptions })[RUN_OPTIONS] = runOptions;
    return compiled;
  }

  return {
    compile,
    async execute(db, args) {
      return (await db.executeQuery<R>(compile(db, args))).rows;
    },
    async executeTakeFirst(db, args) {
      return (await db.executeQuery<R>(compile(db, args))).rows[0];
    },
  };
}
