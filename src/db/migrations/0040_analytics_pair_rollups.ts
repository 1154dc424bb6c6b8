import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * Pair rollups (issue 32, decisions AR6): the rollups of `analytics_daily` and `analytics_monthly`
 * once more per value of a common `is` filter (`fdim` names the filter's session column or two of
 * them, `f1`/`f2` their value ids), so a filtered report over a year reads a few rows a day
 * instead of scanning its sessions. Months are keyed by filter value first (a range's months are
 * one index range), days by day first (see below). Existing days are marked dirty: the worker's rebuild writes their pair rows, and
 * until then those days are read live (exact, only slower).
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  const int8 = pg ? 'bigint' : 'integer';
  const table = (name: string, period: string) =>
    db.schema
      .createTable(name)
      .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('fdim', 'text', (col) => col.notNull())
      .addColumn('f1', 'integer', (col) => col.notNull())
      .addColumn('f2', 'integer', (col) => col.notNull())
      .addColumn('dim', 'text', (col) => col.notNull())
      .addColumn(period, 'integer', (col) => col.notNull())
      .addColumn('v1', 'integer', (col) => col.notNull())
      .addColumn('v2', 'integer', (col) => col.notNull())
      .addColumn('visitors', 'integer', (col) => col.notNull())
      .addColumn('visits', 'integer', (col) => col.notNull())
      .addColumn('pageviews', 'integer', (col) => col.notNull())
      .addColumn('bounces', 'integer', (col) => col.notNull())
      .addColumn('duration_ms', int8, (col) => col.notNull())
      .addColumn('engaged_ms', int8, (col) => col.notNull())
      .addColumn('events', 'integer', (col) => col.notNull())
      .addColumn('conversions', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint(
        `${name}_pk`,
        period === 'day' ? ['site_id', 'day', 'fdim', 'f1', 'f2', 'dim', 'v1', 'v2'] : ['site_id', 'fdim', 'f1', 'f2', 'dim', 'month', 'v1', 'v2'],
      )
      .modifyEnd(pg ? sql`` : sql`without rowid`)
      .execute();
  // Days first: the rebuild replaces a site-day's rows and a read seeks each of its days (a list), so
  // no second index is needed (one on the day held as many bytes as the rows: the key is most of a row).
  await table('analytics_pair_daily', 'day');
  await table('analytics_pair_monthly', 'month');
  await sql`update analytics_days set dirty = 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_pair_monthly').execute();
  await db.schema.dropTable('analytics_pair_daily').execute();
}
