import pg from 'pg';
import { Kysely, sql, PostgresDialect } from 'kysely';
import { openSqliteDialect } from './sqlite.js';
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
  /** SQLite: how long a write waits for another process's lock before failing with SQLITE_BUSY (503). */
  sqliteBusyTimeoutMs?: number;
}

function openSqlite(file: string, busyTimeoutMs: number): Database {
  const { dialect } = openSqliteDialect(file, busyTimeoutMs);
  const db = new Kysely<DB>({ dialect });
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
  // A client checked out by a request has no pool listener: when its connection drops (the server
  // restarts, pg_terminate_backend) the 'error' event would kill the process. The query in flight
  // fails on its own and its request answers 503; the pool drops the broken client on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', schema: options.pgSchema, close: () => db.destroy() };
}

/**
 * Waits until the database answers `select 1`, retrying with backoff (0.25 s doubling to 4 s)
 * for up to `timeoutMs`: a service started beside its database (compose, a reboot) does not exit
 * because PostgreSQL is still starting. Throws the last error, named, after the deadline.
 */
export async function waitUntilReachable(database: Database, timeoutMs: number, onRetry?: (err: Error, delayMs: number) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 4000)) {
    try {
      await sql`select 1`.execute(database.db);
      return;
    } catch (err) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`The database is unreachable after ${timeoutMs} ms: ${(err as Error).message}`);
      const wait = Math.min(delay, left);
      onRetry?.(err as Error, wait);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

export function connectDatabase(options: ConnectOptions): Database {
  return isPostgres(options.databaseUrl) ? openPostgres(options.databaseUrl, options) : openSqlite(options.databaseUrl, options.sqliteBusyTimeoutMs ?? 5000);
}
