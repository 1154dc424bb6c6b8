import { AsyncLocalStorage } from 'node:async_hooks';
import { type ControlledTransaction, type Kysely, sql } from 'kysely';
import type { DB } from './types.js';

/**
 * One transaction for a whole request, for the requests that ask for it (an `Idempotency-Key`,
 * decisions HR4): the first transaction the request's code opens is held open after its
 * callback returns, every later statement of the request runs in it (nested transactions as
 * savepoints), and whoever opened the scope commits it, with what it adds, or rolls it back.
 * So a create and the answer stored for it commit together, without the services knowing.
 */
export class RequestTransaction {
  private tx: ControlledTransaction<DB> | null = null;
  private opening: Promise<ControlledTransaction<DB>> | null = null;
  private savepoints = 0;
  /** Committed or rolled back: the request is over, and nothing it still runs may open another. */
  private closed = false;

  constructor(readonly db: Kysely<DB>) {}

  /** The held transaction, opened by the request's first transaction. */
  async open(): Promise<ControlledTransaction<DB>> {
    if (this.tx) return this.tx;
    if (this.closed) throw new Error('The request transaction has ended');
    this.opening ??= this.db
      .startTransaction()
      .execute()
      .then((tx) => {
        this.tx = tx;
        return tx;
      });
    return this.opening;
  }

  /** What the request's code sees as a transaction: the held one, inside a savepoint. */
  async run<T>(work: (tx: Kysely<DB>) => Promise<T>): Promise<T> {
    const tx = await this.open();
    const name = `request_sp${++this.savepoints}`;
    await sql.raw(`savepoint ${name}`).execute(tx);
    try {
      const out = await work(tx);
      await sql.raw(`release savepoint ${name}`).execute(tx);
      return out;
    } catch (err) {
      // A failed nested transaction undoes its own writes only, as it would have on its own.
      await sql
        .raw(`rollback to savepoint ${name}`)
        .execute(tx)
        .catch(() => undefined);
      throw err;
    }
  }

  /** Until committed or rolled back; after, work the request left running (a timer, a hook) uses the pool as usual. */
  get active(): boolean {
    return !this.closed;
  }

  /** The held transaction if one was opened (statements outside a transaction run in it). */
  get current(): ControlledTransaction<DB> | null {
    return this.tx;
  }

  async commit(): Promise<void> {
    this.closed = true;
    const tx = this.tx ?? (this.opening ? await this.opening : null);
    this.tx = this.opening = null;
    if (tx) await tx.commit().execute();
  }

  async rollback(): Promise<void> {
    this.closed = true;
    const tx = this.tx ?? (this.opening ? await this.opening.catch(() => null) : null);
    this.tx = this.opening = null;
    if (tx) await tx.rollback().execute();
  }
}

const scope = new AsyncLocalStorage<RequestTransaction>();

/** Runs `work` (and everything it starts) with statements on `db` going through `held`. */
export function withRequestTransaction<T>(held: RequestTransaction, work: () => T): T {
  return scope.run(held, work);
}

/** The methods that start a statement on a handle: sent to the held transaction once there is one. */
const STATEMENTS = new Set<PropertyKey>([
  'selectFrom',
  'selectNoFrom',
  'insertInto',
  'replaceInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'with',
  'withRecursive',
  'executeQuery',
]);

/**
 * The database handle the modules get: itself outside a request scope (no cost but one
 * AsyncLocalStorage read a property); inside one, `transaction()` and `connection()` run in the
 * held transaction, and statements too once it is open (before, a read goes to the pool as
 * usual).
 */
export function requestScoped(db: Kysely<DB>): Kysely<DB> {
  if (rawHandles.has(db)) return db;
  const bound = new Map<PropertyKey, unknown>();
  const scoped = new Proxy(db, {
    get(target, prop) {
      const held = scope.getStore();
      if (held && held.db === target && held.active) {
        if (prop === 'transaction' || prop === 'connection') return () => ({ execute: (work: (tx: Kysely<DB>) => Promise<unknown>) => held.run(work) });
        const tx = held.current;
        if (tx && STATEMENTS.has(prop)) {
          const value = Reflect.get(tx, prop, tx);
          return typeof value === 'function' ? value.bind(tx) : value;
        }
      }
      // Kysely keeps its state in private fields: its methods must run on the handle itself.
      let value = bound.get(prop);
      if (value === undefined) {
        value = Reflect.get(target, prop, target);
        if (typeof value === 'function') {
          value = (value as (...args: unknown[]) => unknown).bind(target);
          bound.set(prop, value);
        }
      }
      return value;
    },
  });
  rawHandles.set(scoped, db);
  return scoped;
}

/** Each scoped handle's own handle (what a RequestTransaction opens its transaction on). */
const rawHandles = new WeakMap<Kysely<DB>, Kysely<DB>>();

/** The handle under a scoped one (itself when it is not scoped). */
export function unscoped(db: Kysely<DB>): Kysely<DB> {
  return rawHandles.get(db) ?? db;
}
