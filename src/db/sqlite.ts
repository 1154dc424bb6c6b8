import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, SqliteAdapter, SqliteDialect, type TransactionSettings } from 'kysely';
import { followUp, offLoop, sqliteFunctions } from './prepared.js';
import { type Checkpointer, startCheckpointer } from './sqlite-checkpoint.js';
import { defineSqliteFunctions } from './sqlite-functions.js';
import { SqliteReaderThread } from './sqlite-reader-thread.js';

const STATEMENT_CACHE_SIZE = 500;

/**
 * The text SQLite prepares for a statement's SQL (decisions PF12): each parameter compared for
 * equality (`= ?`, `is ?`, `in (?, ...)`) and a LIMIT's or OFFSET's becomes `+?`, the same value.
 * SQLite's planner (3.54, as better-sqlite3 13 builds it) marks a parameter it estimated a join
 * or an index probe with, or took a LIMIT's count from, as "re-prepare when bound again", and
 * better-sqlite3 binds every parameter on every run: a join read by id was prepared again on
 * every execution (35 us for a two-table join, 220 us for the detail read, against 5 and 25 us),
 * a list page too (155-270 us against 55-60). `+?` is a value the planner does not look into: the
 * plan is made once, from the statistics alone, and the LIMIT is counted at run time. A LIKE's
 * pattern too (PF22): the planner reads a bound pattern to see whether it is a prefix an index
 * could seek, which re-prepares the statement on every run, and every pattern Cairn binds starts
 * with `%` (dialect containsText) or is matched on a column no case-insensitive index covers.
 * Ranges keep their parameters (the planner may read their values). Quoted text is left as it is.
 */
const QUOTED_OR_EQUALITY = /'(?:[^']|'')*'|"(?:[^"]|"")*"|((?<![<>!])= |\bis |\bin \(|\blimit |\boffset |\blike )(\?(?:, \?)*)/gi;
const planned = new Map<string, string>();
export function planOnceSql(sql: string): string {
  let text = planned.get(sql);
  if (text === undefined) {
    text = sql.replace(QUOTED_OR_EQUALITY, (match, op: string | undefined, params: string | undefined) =>
      op === undefined ? match : op + params!.replaceAll('?', '+?'),
    );
    if (planned.size >= STATEMENT_CACHE_SIZE * 2) planned.delete(planned.keys().next().value!);
    planned.set(sql, text);
  }
  return text;
}

/**
 * One better-sqlite3 connection with its prepared statements cached by SQL text. better-sqlite3
 * binds only numbers, strings, bigints, buffers and null: booleans become 0/1 and dates ISO
 * strings here (the one place the SQLite value mapping lives).
 */
class SqliteHandle {
  private readonly cache = new Map<string, BetterSqlite3.Statement>();
  constructor(readonly raw: BetterSqlite3.Database) {}

  statement(sql: string): BetterSqlite3.Statement {
    let stmt = this.cache.get(sql);
    if (!stmt) {
      stmt = this.raw.prepare(planOnceSql(sql));
      if (this.cache.size >= STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(sql, stmt);
    }
    return stmt;
  }

  run(query: CompiledQuery): QueryResult<unknown> {
    const functions = sqliteFunctions(query);
    if (functions) defineSqliteFunctions(this.raw, functions);
    const stmt = this.statement(query.sql);
    const params = bindable(query.parameters);
    if (stmt.reader) return { rows: stmt.all(...params) };
    const { changes, lastInsertRowid } = stmt.run(...params);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}

/** Parameters as better-sqlite3 binds them. */
const bindable = (parameters: readonly unknown[]) => parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p instanceof Date ? p.toISOString() : p));

/** SQLite's own answer when the lock cannot be had in time: the errors plugin makes it a 503. */
function busyError(): Error {
  return Object.assign(new Error('database is locked (waited SQLITE_BUSY_TIMEOUT_MS for the writer)'), { code: 'SQLITE_BUSY' });
}

/**
 * A promise-based mutex: the one writer connection serves one transaction at a time. A waiter
 * may give a deadline: it leaves the line then, with SQLITE_BUSY, so time spent behind other
 * writes counts against its own busy timeout (decisions HN1).
 */
class Mutex {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  lock(deadline = Number.POSITIVE_INFINITY): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(this.releaser());
      };
      this.waiting.push(grant);
      const timer =
        deadline === Number.POSITIVE_INFINITY
          ? undefined
          : setTimeout(
              () => {
                this.waiting.splice(this.waiting.indexOf(grant), 1);
                reject(busyError());
              },
              Math.max(0, deadline - Date.now()),
            );
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    };
  }
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

const isBusy = (err: unknown) => {
  const code = (err as { code?: string } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_BUSY_RECOVERY';
};

/**
 * The driver behind every SQLite database (decisions H20):
 *
 * - a writer connection for transactions and writes, one at a time (a mutex, as Kysely's own
 *   driver), and on a file a second, read-only connection for every statement outside a
 *   transaction that only reads: in WAL mode it never waits for a writer, in this process or
 *   another one, so reads and `/health` go on while a write waits for the lock;
 * - the writer's busy_timeout is 0 and a write that finds the file locked by another process
 *   (the CLI, a backup) retries on a timer until `busyTimeoutMs`, instead of SQLite's busy
 *   handler sleeping inside the synchronous call and freezing the event loop; past the deadline
 *   SQLITE_BUSY reaches the errors plugin as a 503 with Retry-After.
 */
export class SqliteDriver implements Driver {
  private readonly writerLock = new Mutex();

  constructor(
    readonly writer: SqliteHandle,
    private reader: SqliteHandle | null,
    private readonly busyTimeoutMs: number,
    private readonly checkpointer: Checkpointer | null = null,
    /** On a file: where statements marked to run off the event loop go (prepared.ts `offLoop`, decisions HN13). */
    readonly readerThread: SqliteReaderThread | null = null,
  ) {}

  async init(): Promise<void> {}

  /**
   * Brings the planner's statistics up to date (decisions H30): `PRAGMA optimize` on the writer,
   * checking every table's size (0x10000) and analysing within SQLite's own time limit (0x10), so
   * tables that grew since the last analysis (from empty, when the server was started on a new
   * file and filled through the API) are analysed again. A connection loads statistics only when
   * it opens, so when any changed the reader is opened again. Returns whether any changed.
   */
  async refreshStatistics(): Promise<boolean> {
    return this.withWriterLock(() =>
      this.onWriter(() => {
        const raw = this.writer.raw;
        const before = statisticsDigest(raw);
        raw.pragma('optimize=0x10012');
        if (statisticsDigest(raw) === before) return false;
        if (this.reader) {
          const old = this.reader;
          this.reader = openReader(raw.name);
          old.raw.close();
        }
        this.readerThread?.renew();
        return true;
      }),
    );
  }

  /** `PRAGMA data_version`, prepared once: `raw.pragma()` prepares its statement on every call. */
  private dataVersionStatement: BetterSqlite3.Statement | null = null;

  /**
   * Changes when another connection to the file commits (never for this writer's own commits).
   * Read on every cached delivery read, so its statement is prepared once (about 1 µs a call).
   */
  dataVersion(): number {
    this.dataVersionStatement ??= this.writer.raw.prepare('PRAGMA data_version').pluck();
    return this.dataVersionStatement.get() as number;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this);
  }

  /** When a write asked for now must give up: waiting in line and for the file lock both count. */
  writeDeadline(): number {
    return Date.now() + this.busyTimeoutMs;
  }

  /** Runs `work` on the writer, retrying while another process holds the lock, until the deadline. */
  async onWriter<T>(work: () => T, deadline = this.writeDeadline()): Promise<T> {
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      try {
        return work();
      } catch (err) {
        if (!isBusy(err) || Date.now() >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(1, deadline - Date.now()))));
      }
    }
  }

  async withWriterLock<T>(work: () => Promise<T>, deadline?: number): Promise<T> {
    const release = await this.writerLock.lock(deadline);
    try {
      return await work();
    } finally {
      release();
    }
  }

  lockWriter(deadline?: number): Promise<() => void> {
    return this.writerLock.lock(deadline);
  }

  /** The read-only connection when `sql` only reads and there is one; else null. */
  readerFor(sql: string): SqliteHandle | null {
    if (!this.reader) return null;
    try {
      return this.reader.statement(sql).readonly ? this.reader : null;
    } catch {
      // Not preparable on the reader (a table created moments ago in a transaction): the writer decides.
      return null;
    }
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    await (connection as RoutedConnection).begin();
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).end('commit');
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).end('rollback');
  }
  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoted(name)}`));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to ${quoted(name)}`));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release ${quoted(name)}`));
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).abandon();
  }
  async destroy(): Promise<void> {
    await this.checkpointer?.stop();
    await this.readerThread?.close();
    this.reader?.raw.close();
    this.writer.raw.close();
  }
}

/**
 * Statements that held the event loop longer than this in one turn are followed by a turn of the
 * event loop (decisions H29, HN7). better-sqlite3 is synchronous and Kysely chains a transaction's statements as
 * promise continuations, which never let I/O in: a 1 MB post's insert, revision and commit (about
 * 20 ms each) ran as one 60-100 ms block that every other site's requests waited behind. Yielding
 * only after slow statements costs the usual small ones nothing.
 */
export const YIELD_AFTER_MS = 2;

/**
 * Statement time since the event loop last turned (decisions HN7): many statements of 0.5-1.5 ms
 * in a row (an import's duplicate checks, 500 keys each, a search's counts and page) never passed
 * the per-statement test and held the loop together, so it is their sum that is bounded. A
 * setImmediate queued by the turn's first statement marks the turn's end.
 */
let turnMs = 0;
let turnMarked = false;
const endTurn = () => {
  turnMarked = false;
  turnMs = 0;
};

function yieldAfterSlow(tookMs: number): Promise<void> | undefined {
  if (!turnMarked) {
    turnMarked = true;
    setImmediate(endTurn);
  }
  turnMs += tookMs;
  // A plain turn, not the heavy-work lane (shared/time-slice.ts): any request's statements pass this bound in a
  // busy turn, and a light read must not wait behind the heavy pieces queued there.
  return turnMs > YIELD_AFTER_MS ? new Promise((resolve) => setImmediate(resolve)) : undefined;
}

/** What Kysely holds as "a connection": routes each statement to the reader or the writer. */
class RoutedConnection implements DatabaseConnection {
  private release: (() => void) | null = null;

  constructor(private readonly driver: SqliteDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { driver } = this;
    // Only the statement itself is timed: waiting for the writer's lock holds no event loop.
    let took = 0;
    const run = (handle: SqliteHandle) => {
      const started = performance.now();
      try {
        return handle.run(query);
      } finally {
        took = performance.now() - started;
      }
    };
    let result: QueryResult<unknown>;
    if (this.release) result = run(driver.writer);
    else if (driver.readerThread && offLoop(query))
      return { rows: (await driver.readerThread.all(planOnceSql(query.sql), bindable(query.parameters), sqliteFunctions(query), followUp(query))) as R[] };
    else {
      const reader = driver.readerFor(query.sql);
      // A write outside a transaction is atomic on its own: retrying it while the file is locked is safe.
      const deadline = driver.writeDeadline();
      result = reader ? run(reader) : await driver.withWriterLock(() => driver.onWriter(() => run(driver.writer), deadline), deadline);
    }
    await yieldAfterSlow(took);
    return result as QueryResult<R>;
  }

  async begin(): Promise<void> {
    const deadline = this.driver.writeDeadline();
    const release = await this.driver.lockWriter(deadline);
    try {
      await this.driver.onWriter(() => this.driver.writer.raw.exec('begin immediate'), deadline);
      this.release = release;
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Commit or roll back; a failed commit keeps the lock, as Kysely then rolls back. */
  async end(how: 'commit' | 'rollback'): Promise<void> {
    const started = performance.now();
    if (how === 'commit') this.driver.writer.raw.exec('commit');
    else if (this.driver.writer.raw.inTransaction) this.driver.writer.raw.exec('rollback');
    this.abandon();
    await yieldAfterSlow(performance.now() - started);
  }

  /** Lets go of the writer (after commit or rollback, or a connection given back mid-transaction). */
  abandon(): void {
    if (!this.release) return;
    if (this.driver.writer.raw.inTransaction) this.driver.writer.raw.exec('rollback');
    const release = this.release;
    this.release = null;
    release();
  }

  // biome-ignore lint/correctness/useYield: streaming is not used; Kysely requires the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not supported on SQLite here');
  }
}

/**
 * SQLite's DDL is transactional, but Kysely's adapter says it is not, so its migrator ran each
 * statement on its own: an upgrade killed half-way through a migration (one building indexes over
 * millions of rows takes minutes) left some of its indexes made and the migration unrecorded, and
 * every later start failed on "index ... already exists". Saying it is makes the migrator run the
 * pending migrations and their records in one transaction, as on PostgreSQL.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class CairnSqliteDialect extends SqliteDialect {
  constructor(private readonly driver: SqliteDriver) {
    super({ database: {} as never });
  }
  override createDriver(): Driver {
    return this.driver;
  }
  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** The planner's statistics as one string, to tell whether an optimize changed them. */
function statisticsDigest(raw: BetterSqlite3.Database): string {
  const exists = raw.prepare("select 1 from sqlite_schema where name = 'sqlite_stat1'").get();
  if (!exists) return '';
  return String(
    raw.prepare("select group_concat(tbl || ' ' || coalesce(idx, '') || ' ' || coalesce(stat, ''), ';') as s from sqlite_stat1").pluck().get() ?? '',
  );
}

/** The read-only connection of a file: a WAL reader waits only for a checkpoint's brief exclusive moments (or WAL recovery). */
function openReader(file: string): SqliteHandle {
  const r = new BetterSqlite3(file, { readonly: true });
  r.pragma('busy_timeout = 100');
  // Reports read large tables with index lookups (analytics scans): pages served from a map of
  // the file and a 64 MB cache cost no read call each (SQLite's default cache is 2 MB).
  r.pragma('cache_size = -65536');
  r.pragma('mmap_size = 4294967296');
  return new SqliteHandle(r);
}

/** Opens a SQLite file (or `:memory:`) with its writer and, for a file, a read-only reader. */
export function openSqliteDialect(
  file: string,
  busyTimeoutMs: number,
  checkpointIntervalMs = 1000,
  offLoopPause?: (ms: number) => number,
): { dialect: SqliteDialect; driver: SqliteDriver } {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  // Waiting for another process's lock happens on a timer in SqliteDriver.onWriter, never
  // inside SQLite's busy handler, which would block the event loop for the whole wait.
  raw.pragma('busy_timeout = 0');
  raw.pragma('foreign_keys = ON');
  // Refresh the planner's statistics where they are missing or stale (SQLite's advice for
  // long-lived connections); cheap when nothing changed.
  if (file !== ':memory:') raw.pragma('optimize=0x10012');
  let reader: SqliteHandle | null = null;
  let checkpointer: Checkpointer | null = null;
  if (file !== ':memory:') {
    reader = openReader(file);
    // Checkpoints on a thread of their own (sqlite-checkpoint.ts); back on the writer if it dies.
    raw.pragma('wal_autocheckpoint = 0');
    checkpointer = startCheckpointer(file, checkpointIntervalMs, () => {
      if (raw.open) raw.pragma('wal_autocheckpoint = 1000');
    });
  }
  const driver = new SqliteDriver(
    new SqliteHandle(raw),
    reader,
    busyTimeoutMs,
    checkpointer,
    file === ':memory:' ? null : new SqliteReaderThread(file, offLoopPause),
  );
  return { dialect: new CairnSqliteDialect(driver), driver };
}
