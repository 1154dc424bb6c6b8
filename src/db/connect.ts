import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type DatabaseConnection, type Driver } from 'kysely';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { DB } from './types.js';
import { isPostgres } from '../config.js';

import type { DialectName } from './dialect.js';

export type { DialectName };

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  /** PostgreSQL schema the sessions use, when not the default one. */
  schema?: string;
  close(): Promise<void>;
}

export interface ConnectOptions {
  databaseUrl: string;
  /** PostgreSQL only: run every session in this schema (tests use one schema per file). */
  pgSchema?: string;
  onPoolError?: (err: Error) => void;
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * better-sqlite3 binds only numbers, strings, bigints, buffers and null, and Kysely prepares a
 * statement for every query. This wrapper maps booleans to 0/1 and dates to ISO strings (the
 * one place the SQLite value mapping lives) and caches prepared statements by SQL text.
 */
function wrapSqlite(raw: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const bind = (params: ReadonlyArray<unknown>): unknown[] =>
    params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p instanceof Date ? p.toISOString() : p));
  return {
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = raw.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      const s = stmt;
      return {
        reader: s.reader,
        all: (params) => s.all(...bind(params)),
        run: (params) => s.run(...bind(params)),
        iterate: (params) => s.iterate(...bind(params)) as IterableIterator<unknown>,
      };
    },
  };
}

/** SQLite write transactions start with BEGIN IMMEDIATE, so a second process (the CLI) waits on busy_timeout instead of failing mid-transaction. */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

function openSqlite(file: string): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('foreign_keys = ON');
  // Refresh the planner's statistics where they are missing or stale (SQLite's advice for
  // long-lived connections); cheap when nothing changed.
  if (file !== ':memory:') raw.pragma('optimize=0x10002');
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: wrapSqlite(raw) }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

function openPostgres(url: string, options: ConnectOptions): Database {
  const timestamptz = pg.types.getTypeParser(1184);
  const sessionOptions = ['-c TimeZone=UTC'];
  if (options.pgSchema) sessionOptions.push(`-c search_path=${options.pgSchema}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    idleTimeoutMillis: 30_000,
    statement_timeout: 30_000,
    application_name: options.pgSchema ? `cairn:${options.pgSchema}` : 'cairn',
    options: sessionOptions.join(' '),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
        // timestamptz -> ISO 8601 UTC with milliseconds (decisions G8); int8 (counts) -> number.
        if (oid === 1184) return (v: string) => (timestamptz(v) as Date).toISOString();
        if (oid === 20) return (v: string) => Number(v);
        return pg.types.getTypeParser(oid, format as 'text');
      }) as typeof pg.types.getTypeParser,
    },
  });
  // A dropped connection emits 'error' on an idle client; without a listener the process dies.
  // The pool discards the client and opens a new one on the next query.
  pool.on('error', (err) => options.onPoolError?.(err));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', schema: options.pgSchema, close: () => db.destroy() };
}

export function connectDatabase(options: ConnectOptions): Database {
  return isPostgres(options.databaseUrl) ? openPostgres(options.databaseUrl, options) : openSqlite(options.databaseUrl);
}
