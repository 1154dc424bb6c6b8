import { type UniqueCode, uniqueByName, uniqueBySqliteMessage, type UniqueConstraint } from './unique-constraints.js';

/**
 * Database constraint errors, recognised per dialect and described without the error catalog
 * (db/ stays free of imports from shared/): the errors plugin turns a fault into its catalog error,
 * so a duplicate is a 422 and not a 500. Services check the rules they know first and name the
 * field; this is the safety net for races between the check and the write.
 */
export type DbFault =
  /** A unique constraint: its field (null when no request sends the value) and code, from db/unique-constraints.ts. */
  | { kind: 'unique'; field: string | null; code: UniqueCode }
  | { kind: 'reference' }
  | { kind: 'nul-character' }
  /** The database cannot be reached or is busy right now: the request may be retried (503). */
  | { kind: 'unavailable'; reason: 'connection' | 'busy' }
  /** The database's disk is full (SQLite SQLITE_FULL, PostgreSQL 53100): the write was not kept (507). */
  | { kind: 'full' };

/**
 * Connection-level failures: the server went away (57P01 admin shutdown, 57P02/57P03 crash or
 * start-up, class 08 connection exceptions), the socket broke, or the pool's client was already
 * broken. None of them says anything about the request: it can be retried.
 */
const PG_UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300']);
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect)/;

export function classifyDbError(error: unknown): DbFault | null {
  if (!error || typeof error !== 'object') return null;
  const e = error as { code?: string; message?: string; constraint?: string };
  // PostgreSQL: 23505 unique_violation, 23503 foreign_key_violation.
  if (e.code === '23505') return uniqueFault(uniqueByName(e.constraint ?? ''));
  if (e.code === '23503') return { kind: 'reference' };
  // 22P05 untranslatable character, 22021 character not in repertoire: PostgreSQL text cannot hold NUL.
  if (e.code === '22P05' || e.code === '22021') return { kind: 'nul-character' };
  // 53100 disk_full; SQLite says SQLITE_FULL when a write to the file or its WAL finds no space.
  if (e.code === '53100' || e.code === 'SQLITE_FULL') return { kind: 'full' };
  if ((e.code && (PG_UNAVAILABLE_CODES.has(e.code) || SOCKET_CODES.has(e.code))) || CONNECTION_MESSAGES.test(e.message ?? '')) {
    return { kind: 'unavailable', reason: 'connection' };
  }
  // SQLite: another process holds the write lock beyond our wait (see db/connect.ts).
  if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_BUSY_SNAPSHOT' || e.code === 'SQLITE_LOCKED') return { kind: 'unavailable', reason: 'busy' };
  // SQLite: SQLITE_CONSTRAINT_UNIQUE "UNIQUE constraint failed: tags.site_id, tags.locale, tags.slug".
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return uniqueFault(uniqueBySqliteMessage(e.message ?? ''));
  if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'reference' };
  return null;
}

/** A primary key, or a constraint missing from the table, is a clash on the body. */
function uniqueFault(constraint: UniqueConstraint | undefined): DbFault {
  return { kind: 'unique', field: constraint?.field ?? null, code: constraint?.code ?? 'UNIQUE_VIOLATION' };
}
