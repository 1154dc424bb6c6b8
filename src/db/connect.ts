import { createRequire } from 'node:module';
import type PgModule from 'pg';
import { Kysely, sql, PostgresDialect } from 'kysely';
import { openSqliteDialect } from './sqlite.js';
import { statementName } from './prepared.js';
import type { DB } from './types.js';
import { isPostgres } from '../config.js';

import type { DialectName } from './dialect.js';

export type { DialectName };

/** What other processes announce changes of (migrations 0013, 0015, 0024). */
export const CHANGE_CHANNELS = ['cairn_api_tokens', 'cairn_redirects', 'cairn_site_content'] as const;
export type ChangeChannel = (typeof CHANGE_CHANNELS)[number];

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  /** PostgreSQL schema the sessions use, when not the default one. */
  schema?: string;
  /**
   * Calls `onChange` when another process may have changed what this one caches: API tokens
   * (revoked, scopes or expiry changed; decisions H23) or a site's redirect rules (R5), with the
   * token or site id when known, so cached rows are forgotten at once. PostgreSQL: LISTEN on
   * the channels (triggers of migrations 0013 and 0015). SQLite: any commit by another process on
   * the file (`PRAGMA data_version`, checked every 100 ms) announces every channel. Returns a stop
   * function.
   */
  watchChanges(onChange: (channel: ChangeChannel, id?: string) => void): () => Promise<void>;
  /**
   * Announces at once, through the `watchChanges` callback, what another process committed since
   * the last look, for a read that must not wait for the next poll (the delivery cache).
   * SQLite: one `PRAGMA data_version` read, at most once a millisecond. PostgreSQL: nothing
   * (notifications arrive on their own).
   */
  pollChanges(): void;
  /**
   * Brings the planner's statistics up to date now (decisions H30). SQLite does it on its own
   * every `SQLITE_OPTIMIZE_INTERVAL_MS`, PostgreSQL with autovacuum; this runs it at once (the
   * plan test; PostgreSQL: ANALYZE on the schema's tables).
   */
  refreshStatistics(): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  databaseUrl: string;
  /** PostgreSQL only: run every session in this schema (tests use one schema per file). */
  pgSchema?: string;
  onPoolError?: (err: Error) => void;
  /** SQLite: how long a write waits for another process's lock before failing with SQLITE_BUSY (503). */
  sqliteBusyTimeoutMs?: number;
  /** SQLite: how often the checkpoint thread copies the WAL into the database file (sqlite-checkpoint.ts). */
  sqliteCheckpointIntervalMs?: number;
  /** SQLite: how often the planner's statistics are refreshed (SqliteDriver.refreshStatistics). */
  sqliteOptimizeIntervalMs?: number;
  /** SQLite: how long the reader thread waits after a read that ran `ms` before the next (decisions HN18); none if unset. */
  sqliteOffLoopPause?: (ms: number) => number;
}

function openSqlite(
  file: string,
  busyTimeoutMs: number,
  checkpointIntervalMs: number,
  optimizeIntervalMs: number,
  offLoopPause?: (ms: number) => number,
): Database {
  const { dialect, driver } = openSqliteDialect(file, busyTimeoutMs, checkpointIntervalMs, offLoopPause);
  const db = new Kysely<DB>({ dialect });
  // Statistics follow the data: a server started on an empty file and filled through the API
  // would otherwise plan with the empty file's statistics until it restarts (H30).
  const optimizer = setInterval(() => void driver.refreshStatistics().catch(() => undefined), optimizeIntervalMs);
  optimizer.unref();
  let poll: () => void = () => undefined;
  const watchChanges = (onChange: (channel: ChangeChannel) => void) => {
    // data_version of the writer changes only when another connection (another process: our own
    // reader never writes) commits; a cheap counter read, no query against the tables.
    let seen = driver.dataVersion();
    let lastPoll = 0;
    poll = () => {
      // At most once a millisecond: reading data_version costs about 20 µs, a cached read 200.
      const at = performance.now();
      if (at - lastPoll < 1) return;
      lastPoll = at;
      const now = driver.dataVersion();
      if (now !== seen) {
        seen = now;
        for (const channel of CHANGE_CHANNELS) onChange(channel);
      }
    };
    const timer = setInterval(() => poll(), 100);
    timer.unref();
    return async () => {
      clearInterval(timer);
      poll = () => undefined;
    };
  };
  const refreshStatistics = async () => {
    await driver.refreshStatistics();
  };
  const close = () => {
    clearInterval(optimizer);
    return db.destroy();
  };
  return { db, dialect: 'sqlite', watchChanges, pollChanges: () => poll(), refreshStatistics, close };
}

/**
 * A dedicated connection that LISTENs on the change channels, reconnecting with backoff when it
 * drops; after a reconnect everything cached is forgotten, since notifications may have been missed.
 */
// pg is loaded only for a PostgreSQL database: a SQLite process does not carry its ~15 MB.
const require = createRequire(import.meta.url);
const loadPg = (): typeof PgModule => require('pg') as typeof PgModule;

function listenForChanges(clientConfig: PgModule.ClientConfig, onChange: (channel: ChangeChannel, id?: string) => void, onError?: (err: Error) => void) {
  let stopped = false;
  const pg = loadPg();
  let client: PgModule.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  const connect = async (delay: number, reconnect: boolean) => {
    if (stopped) return;
    const c = new pg.Client(clientConfig);
    c.on('error', (err) => onError?.(err));
    c.on('notification', (msg) => onChange(msg.channel as ChangeChannel, msg.payload || undefined));
    c.on('end', () => {
      if (client === c && !stopped) {
        client = null;
        retry = setTimeout(() => void connect(1000, true), 1000);
        retry.unref();
      }
    });
    try {
      await c.connect();
      for (const channel of CHANGE_CHANNELS) await c.query(`listen ${channel}`);
      if (stopped) return void (await c.end().catch(() => undefined));
      client = c;
      if (reconnect) for (const channel of CHANGE_CHANNELS) onChange(channel);
    } catch (err) {
      onError?.(err as Error);
      await c.end().catch(() => undefined);
      retry = setTimeout(() => void connect(Math.min(delay * 2, 10_000), true), delay);
      retry.unref();
    }
  };
  void connect(500, false);
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const c = client;
    client = null;
    await c?.end().catch(() => undefined);
  };
}

/**
 * Kysely runs every statement as `client.query(text, values)`: an unnamed statement, parsed,
 * analysed and planned by PostgreSQL on every run. The hot queries' statements (db/prepared.ts)
 * go as named ones instead, which the session parses once (decisions PF5).
 */
function sendPreparedAsNamed(client: PgModule.PoolClient): void {
  const query = client.query as (...args: unknown[]) => unknown;
  client.query = function (this: PgModule.PoolClient, ...args: unknown[]) {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values)) {
      const name = statementName(text);
      if (name) return query.call(this, { name, text, values });
    }
    return query.apply(this, args);
  } as typeof client.query;
}

/** A timestamptz as PostgreSQL writes it in a UTC session: `2026-03-14 09:30:00.123456+00`, fraction optional. */
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz's text as ISO 8601 UTC with milliseconds (decisions G8): rearranged as text for
 * the form a UTC session writes (the fraction cut to milliseconds, as a Date keeps it), else
 * through `parse` and a Date (years before 1000, BC, infinity). A list page's five dates a row went
 * through a Date each: 7% of its CPU on PostgreSQL (decisions PF16).
 */
export function isoFromTimestamptz(text: string, parse: (text: string) => unknown): string {
  const m = UTC_TIMESTAMP.exec(text);
  if (!m) return (parse(text) as Date).toISOString();
  const fraction = m[3];
  return `${m[1]}T${m[2]}.${fraction === undefined ? '000' : fraction.length >= 3 ? fraction.slice(0, 3) : fraction.padEnd(3, '0')}Z`;
}

function openPostgres(url: string, options: ConnectOptions): Database {
  const pg = loadPg();
  const timestamptz = pg.types.getTypeParser(1184) as (text: string) => unknown;
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
        if (oid === 1184) return (v: string) => isoFromTimestamptz(v, timestamptz);
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
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    sendPreparedAsNamed(client);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const watchChanges = (onChange: (channel: ChangeChannel, id?: string) => void) =>
    listenForChanges({ connectionString: url, application_name: `${pool.options.application_name}:listen` }, onChange, options.onPoolError);
  const refreshStatistics = async () => {
    const { rows } = await sql<{ name: string }>`select quote_ident(tablename) as name from pg_tables where schemaname = current_schema()`.execute(db);
    if (rows.length) await sql.raw(`analyze ${rows.map((r) => r.name).join(', ')}`).execute(db);
  };
  return { db, dialect: 'postgres', schema: options.pgSchema, watchChanges, pollChanges: () => undefined, refreshStatistics, close: () => db.destroy() };
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
  return isPostgres(options.databaseUrl)
    ? openPostgres(options.databaseUrl, options)
    : openSqlite(
        options.databaseUrl,
        options.sqliteBusyTimeoutMs ?? 5000,
        options.sqliteCheckpointIntervalMs ?? 1000,
        options.sqliteOptimizeIntervalMs ?? 60_000,
        options.sqliteOffLoopPause,
      );
}
