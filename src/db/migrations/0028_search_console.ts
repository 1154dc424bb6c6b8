import { type Kysely, sql } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Search-console data (decisions SC1-SC6): the connection (credentials encrypted), the synced
 * daily rows, the search-indexing log, and the links the site's own contents and page blocks
 * make (kept by their writes, like media_references).
 *
 * Storage for the reports: each query or page text is stored once (`search_keys`) and the daily
 * rows carry its integer id, so a report's aggregation groups integers, not texts. The daily
 * rows are keyed (site, kind, date, key) and carry every column a report reads, so the key is a
 * covering index: on SQLite the table is WITHOUT ROWID (the primary key b-tree is the table), on
 * PostgreSQL the primary key INCLUDEs the metrics. A report reads one contiguous date range.
 * `position_sum` is position x impressions, so the weighted mean is one division.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  const pg = dialect === 'postgres';
  await db.schema
    .createTable('search_connections')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('property_url', 'text', (col) => col.notNull())
    .addColumn('auth_type', 'text', (col) => col.notNull())
    .addColumn('client_email', 'text')
    .addColumn('credentials', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('last_error', 'text')
    .addColumn('connected_at', c.timestamp, (col) => col.notNull())
    .addColumn('last_sync_at', c.timestamp)
    // The oldest day a sync has asked for: the backfill goes on below it until 16 months back.
    .addColumn('backfilled_from', 'text')
    // When the scheduler queues the next sync; null while one is queued or running, or after a refusal.
    .addColumn('next_sync_at', c.timestamp)
    .addColumn('indexing_submitted_until', c.timestamp)
    // The last day the period snapshots (search_period_keys) were built for; null while they are rebuilt.
    .addColumn('periods_through', 'text')
    .execute();
  await db.schema.createIndex('search_connections_next_idx').on('search_connections').column('next_sync_at').execute();

  await c
    .serialId(db.schema.createTable('search_keys'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addUniqueConstraint('search_keys_key_unique', ['site_id', 'kind', 'key'])
    .execute();

  await db.schema
    .createTable('search_daily_totals')
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('date', 'text', (col) => col.notNull())
    .addColumn('clicks', 'integer', (col) => col.notNull())
    .addColumn('impressions', 'integer', (col) => col.notNull())
    .addColumn('position_sum', c.real, (col) => col.notNull())
    .addPrimaryKeyConstraint('search_daily_totals_pk', ['site_id', 'date'])
    .execute();

  const metrics = sql`clicks integer not null, impressions integer not null, position_sum ${sql.raw(c.real)} not null`;
  await sql`create table search_daily_rows (
      site_id text not null references sites(id) on delete cascade,
      kind text not null,
      date text not null,
      key_id integer not null,
      ${metrics},
      ${pg ? sql`primary key (site_id, kind, date, key_id) include (clicks, impressions, position_sum)` : sql`primary key (site_id, kind, date, key_id)`}
    ) ${pg ? sql`` : sql`without rowid`}`.execute(db);

  // Each key's sums for each named period ending at the last synced day, and for the period just
  // before: rebuilt by every sync, so a change list is one indexed read of a page, not an
  // aggregation of months of daily rows.
  await db.schema
    .createTable('search_period_keys')
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('period', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('key_id', 'integer', (col) => col.notNull())
    .addColumn('clicks', 'integer', (col) => col.notNull())
    .addColumn('impressions', 'integer', (col) => col.notNull())
    .addColumn('position_sum', c.real, (col) => col.notNull())
    .addColumn('prev_clicks', 'integer', (col) => col.notNull())
    .addColumn('prev_impressions', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('search_period_keys_pk', ['site_id', 'period', 'kind', 'key_id'])
    .execute();

  await c
    .serialId(db.schema.createTable('search_indexing_logs'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('error', 'text')
    .addColumn('submitted_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('search_indexing_logs_site_idx').on('search_indexing_logs').columns(['site_id', 'id']).execute();

  await db.schema
    .createTable('content_links_out')
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('content_id', 'integer', (col) => col.references('contents.id').onDelete('cascade'))
    .addColumn('site_block_id', 'integer', (col) => col.references('site_blocks.id').onDelete('cascade'))
    .addColumn('target_url', 'text', (col) => col.notNull())
    .addColumn('internal', c.bool, (col) => col.notNull())
    .addCheckConstraint('content_links_out_one_source', sql`(content_id is null) <> (site_block_id is null)`)
    .execute();
  await db.schema.createIndex('content_links_out_target_idx').on('content_links_out').columns(['site_id', 'internal', 'target_url']).execute();
  await db.schema.createIndex('content_links_out_content_idx').on('content_links_out').column('content_id').execute();
  await db.schema.createIndex('content_links_out_block_idx').on('content_links_out').column('site_block_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'content_links_out',
    'search_indexing_logs',
    'search_period_keys',
    'search_daily_rows',
    'search_daily_totals',
    'search_keys',
    'search_connections',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
