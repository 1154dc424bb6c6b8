import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from './connect.js';

/**
 * Where the two dialects differ, written once. Modules import from here, never branch on the
 * dialect themselves.
 */

/** Escapes LIKE wildcards so user text is matched literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Case-insensitive "contains" on any of the columns (SQLite LIKE is case-insensitive for ASCII; PostgreSQL needs ILIKE). */
export function containsText(dialect: DialectName, columns: readonly string[], term: string): RawBuilder<boolean> {
  const pattern = `%${escapeLike(term)}%`;
  const op = dialect === 'postgres' ? sql`ilike` : sql`like`;
  const parts = columns.map((c) => sql`${sql.ref(c)} ${op} ${pattern} escape '\\'`);
  return sql<boolean>`(${sql.join(parts, sql` or `)})`;
}
