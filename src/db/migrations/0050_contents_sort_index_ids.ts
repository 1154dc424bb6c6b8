import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * PostgreSQL: the contents sort indexes end with the row's id (decisions PF23). Every contents
 * list orders by its sort column, then by id (`created_at desc, id desc`: a stable order, and the
 * keyset of MP1's cursor), but the indexes of migration 0007 stopped at the sort column. So
 * PostgreSQL read the index in order of the column only, sorted each run of equal values by id
 * (an Incremental Sort) and, unable to answer from an index that lacks the id, fetched every row
 * it skipped from the table: page 300 of 10,000 posts read 1,370 buffers for 15 ids (4.6 ms).
 * With the id in the index the ids come from an index-only scan in the list's own order
 * (45 buffers, 1.4 ms), and a cursor is one range of it.
 *
 * SQLite needs nothing: every index of a rowid table ends with the rowid, which is `contents.id`.
 * The names stay, so plans and tests read the same on both databases.
 */
const INDEXES: Array<[name: string, columns: string]> = [
  ['contents_site_created_idx', 'site_id, created_at, id'],
  ['contents_site_updated_idx', 'site_id, updated_at, id'],
  ['contents_site_status_published_idx', 'site_id, status, published_at, id'],
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const [name, columns] of INDEXES) {
    await sql.raw(`drop index if exists ${name}`).execute(db);
    await sql.raw(`create index ${name} on contents (${columns})`).execute(db);
  }
}

export async function down(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const [name, columns] of INDEXES) {
    await sql.raw(`drop index if exists ${name}`).execute(db);
    await sql.raw(`create index ${name} on contents (${columns.replace(/, id$/, '')})`).execute(db);
  }
}
