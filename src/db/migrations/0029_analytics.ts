import { type Kysely, sql } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Web analytics storage (decisions A1, A3-A7; design analytics.md section 3). Every string
 * dimension is an integer id of `analytics_values`, times are epoch milliseconds, days are the
 * site's local days counted from 1970-01-01 and hours its local hours, so no time zone ever
 * reaches SQL. `analytics_daily` holds the rollups part 2 reports from; `analytics_days` marks
 * the days whose raw rows changed since their rollup was built. No table has a column for a
 * client address: it is never stored (decisions A4).
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  const pg = dialect === 'postgres';
  const int8 = pg ? 'bigint' : 'integer';
  const site = (col: any) => col.notNull().references('sites.id').onDelete('cascade');

  await c
    .serialId(db.schema.createTable('analytics_values'))
    .addColumn('site_id', 'text', site)
    .addColumn('dim', 'text', (col) => col.notNull())
    .addColumn('value', 'text', (col) => col.notNull())
    .addUniqueConstraint('analytics_values_unique', ['site_id', 'dim', 'value'])
    .execute();

  let sessions = c
    .serialId(db.schema.createTable('analytics_sessions'))
    .addColumn('site_id', 'text', site)
    .addColumn('visitor', int8, (col) => col.notNull())
    .addColumn('sample', 'integer', (col) => col.notNull())
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('hour', 'integer', (col) => col.notNull())
    .addColumn('started_at', int8, (col) => col.notNull())
    .addColumn('last_at', int8, (col) => col.notNull())
    .addColumn('duration_ms', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('pageviews', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('events', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('bounce', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('conversions', 'integer', (col) => col.notNull().defaultTo(0));
  for (const dim of SESSION_DIMS) sessions = sessions.addColumn(dim, 'integer');
  await sessions.addColumn('import_key', 'text').execute();
  await db.schema.createIndex('analytics_sessions_day_idx').on('analytics_sessions').columns(['site_id', 'day', 'started_at']).execute();
  await db.schema.createIndex('analytics_sessions_visitor_idx').on('analytics_sessions').columns(['site_id', 'visitor', 'last_at']).execute();
  await db.schema.createIndex('analytics_sessions_sample_idx').on('analytics_sessions').columns(['site_id', 'sample', 'day']).execute();
  await db.schema.createIndex('analytics_sessions_import_idx').on('analytics_sessions').columns(['site_id', 'import_key']).unique().execute();
  await db.schema.createIndex('analytics_sessions_started_idx').on('analytics_sessions').columns(['site_id', 'started_at']).execute();

  await c
    .serialId(db.schema.createTable('analytics_events'))
    .addColumn('site_id', 'text', site)
    .addColumn('session_id', 'integer', (col) => col.notNull())
    .addColumn('ts', int8, (col) => col.notNull())
    .addColumn('type', 'integer', (col) => col.notNull())
    .addColumn('pv', 'integer')
    .addColumn('path', 'integer')
    .addColumn('value', c.real)
    .addColumn('x', c.real)
    .addColumn('y', 'integer')
    .addColumn('vw', 'integer')
    .addColumn('sel', 'integer')
    .addColumn('target', 'integer')
    .addColumn('flags', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('import_key', 'text')
    .execute();
  await db.schema.createIndex('analytics_events_ts_idx').on('analytics_events').columns(['site_id', 'ts']).execute();
  await db.schema.createIndex('analytics_events_session_idx').on('analytics_events').columns(['session_id', 'ts']).execute();
  await db.schema.createIndex('analytics_events_import_idx').on('analytics_events').columns(['site_id', 'import_key']).unique().execute();

  const rollup = (name: string, period: string) =>
    db.schema
      .createTable(name)
      .addColumn('site_id', 'text', site)
      .addColumn(period, 'integer', (col) => col.notNull())
      .addColumn('dim', 'text', (col) => col.notNull())
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
      .addPrimaryKeyConstraint(`${name}_pk`, ['site_id', 'dim', period, 'v1', 'v2'])
      .modifyEnd(pg ? sql`` : sql`without rowid`)
      .execute();
  await rollup('analytics_daily', 'day');
  await db.schema.createIndex('analytics_daily_day_idx').on('analytics_daily').columns(['site_id', 'day']).execute();
  await rollup('analytics_monthly', 'month');

  await db.schema
    .createTable('analytics_days')
    .addColumn('site_id', 'text', site)
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('dirty', 'integer', (col) => col.notNull())
    .addColumn('changed_at', int8, (col) => col.notNull())
    .addColumn('built_at', int8)
    .addPrimaryKeyConstraint('analytics_days_pk', ['site_id', 'day'])
    .execute();
  await db.schema.createIndex('analytics_days_dirty_idx').on('analytics_days').columns(['dirty', 'changed_at']).execute();

  await db.schema
    .createTable('analytics_salts')
    .addColumn('site_id', 'text', site)
    .addColumn('date', 'text', (col) => col.notNull())
    .addColumn('salt', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('analytics_salts_pk', ['site_id', 'date'])
    .execute();

  await db.schema
    .createTable('analytics_settings')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('tracking_enabled', c.bool, c.boolDefault(true))
    .addColumn('raw_retention_days', 'integer', (col) => col.notNull())
    .addColumn('aggregate_retention_days', 'integer', (col) => col.notNull())
    .addColumn('excluded_paths', c.json, c.jsonDefault([]))
    .addColumn('excluded_ips', c.json, c.jsonDefault([]))
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
}

/** The session columns holding a value id of `analytics_values` (frozen: the migration's own copy). */
const SESSION_DIMS = [
  'entry_path',
  'exit_path',
  'source',
  'referrer',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'country',
  'city',
  'device',
  'browser',
  'os',
  'language',
  'screen',
];

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'analytics_settings',
    'analytics_salts',
    'analytics_days',
    'analytics_monthly',
    'analytics_daily',
    'analytics_events',
    'analytics_sessions',
    'analytics_values',
  ])
    await db.schema.dropTable(table).execute();
}
