import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import { jsonArrayFrom as pgJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';

/**
 * Where the two databases differ, written once and chosen once per database handle
 * (`dialectOf(db)`): modules call its pieces and never branch on the dialect themselves.
 */
export type DialectName = 'sqlite' | 'postgres';

export interface SqlDialect {
  readonly name: DialectName;
  /** Case-insensitive "contains" on any of the columns, with LIKE wildcards in `term` matched literally. */
  containsText(columns: readonly string[], term: string): RawBuilder<boolean>;
  /**
   * The row-lock clause that ends a claim's inner SELECT: rows another instance has locked are
   * skipped (PostgreSQL `FOR UPDATE SKIP LOCKED`, of `alias` when the select joins). SQLite has
   * one writer at a time, so its claim needs no lock and this is empty.
   */
  skipLocked(alias?: string): RawBuilder<unknown>;
  /**
   * The clause that ends a read-modify-write's SELECT inside a transaction: PostgreSQL locks the
   * row (`FOR UPDATE`) so a concurrent writer waits instead of losing its change; SQLite's write
   * transaction (BEGIN IMMEDIATE) already excludes other writers, so this is empty.
   */
  lockForUpdate(): RawBuilder<unknown>;
  /**
   * The clause after a table's alias that makes a read use one index: SQLite's `INDEXED BY`
   * (its planner's statistics, sampled by `PRAGMA optimize`, cannot tell an analytics filter
   * column from the site id and would scan the day index instead); empty on PostgreSQL, whose
   * statistics choose by themselves.
   */
  indexedBy(index: string): RawBuilder<unknown>;
  /**
   * Holds, until the transaction ends, a lock every instance on the database takes under the same
   * name, so a check-then-insert runs one instance at a time (the first-start bootstrap):
   * PostgreSQL's `pg_advisory_xact_lock`; SQLite's write transaction (BEGIN IMMEDIATE) already
   * excludes every other writer, so this is nothing there.
   */
  instanceLock(name: string): RawBuilder<unknown> | null;
  /** Which full-text engine the contents search runs on. */
  readonly fullText: 'fts5' | 'tsvector';
  /**
   * A subquery's rows as one JSON array of objects, in its order (`[]` when it has none): a
   * record and its lists in one statement. Read it with parseJson (text on SQLite, parsed on
   * PostgreSQL).
   */
  jsonArrayFrom(subquery: Parameters<typeof sqliteJsonArrayFrom>[0]): RawBuilder<unknown>;
  /** The larger of two values: SQLite's two-argument `max`, PostgreSQL's `greatest`. */
  greatest(a: RawBuilder<unknown> | ReturnType<typeof sql.ref>, b: RawBuilder<unknown>): RawBuilder<number>;
  /** A JSON column's value as read (`select *`): parsed text on SQLite, already a value on PostgreSQL (jsonb). */
  readJson(stored: unknown): unknown;
  /** A boolean column's value as read: 0/1 on SQLite, true/false on PostgreSQL. */
  readBool(stored: unknown): boolean;
  /** A JSON value as both databases take it in a plain (untyped) statement: JSON text (jsonb casts it). */
  writeJson(value: unknown): string;
  /**
   * A JSON column read as its JSON text, to be passed on as it is: the stored text on SQLite,
   * `::text` on PostgreSQL (node-postgres would otherwise parse a jsonb value that the answer's
   * serializer then writes out again: 10 KB parsed and stringified per detail read).
   */
  jsonText(column: string): RawBuilder<string>;
  /**
   * Whether an INSERT may run inside the WITH of another statement (PostgreSQL's data-modifying
   * CTEs): rows written together then cost one round trip. SQLite has no such WITH.
   */
  readonly insertsInWith: boolean;
}

/** Escapes LIKE wildcards so user text is matched literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function containsWith(op: RawBuilder<unknown>) {
  return (columns: readonly string[], term: string): RawBuilder<boolean> => {
    const pattern = `%${escapeLike(term)}%`;
    const parts = columns.map((c) => sql`${sql.ref(c)} ${op} ${pattern} escape '\\'`);
    return sql<boolean>`(${sql.join(parts, sql` or `)})`;
  };
}

const SQLITE: SqlDialect = {
  name: 'sqlite',
  // SQLite's LIKE is case-insensitive for ASCII.
  containsText: containsWith(sql`like`),
  skipLocked: () => sql``,
  lockForUpdate: () => sql``,
  indexedBy: (index) => sql`indexed by ${sql.id(index)}`,
  instanceLock: () => null,
  fullText: 'fts5',
  jsonArrayFrom: sqliteJsonArrayFrom,
  greatest: (a, b) => sql<number>`max(${a}, ${b})`,
  readJson: (stored) => (typeof stored === 'string' ? JSON.parse(stored) : stored),
  readBool: (stored) => Boolean(stored),
  writeJson: (value) => JSON.stringify(value),
  jsonText: (column) => sql<string>`${sql.ref(column)}`,
  insertsInWith: false,
};

const POSTGRES: SqlDialect = {
  name: 'postgres',
  containsText: containsWith(sql`ilike`),
  skipLocked: (alias) => (alias ? sql`for update of ${sql.raw(alias)} skip locked` : sql`for update skip locked`),
  lockForUpdate: () => sql`for update`,
  indexedBy: () => sql``,
  instanceLock: (name) => sql`select pg_advisory_xact_lock(hashtext(${name}))`,
  fullText: 'tsvector',
  jsonArrayFrom: pgJsonArrayFrom,
  greatest: (a, b) => sql<number>`greatest(${a}, ${b})`,
  readJson: (stored) => stored,
  readBool: (stored) => stored === true,
  writeJson: (value) => JSON.stringify(value),
  jsonText: (column) => sql<string>`${sql.ref(column)}::text`,
  insertsInWith: true,
};

/** The dialect of a database handle or transaction, read from its adapter (transactions share their database's). */
export function dialectOf(db: Kysely<any>): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? POSTGRES : SQLITE;
}
