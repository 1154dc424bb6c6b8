import type { Kysely } from 'kysely';

/**
 * Indexes that let a filtered analytics report read only the rows it needs (issue 32, decisions
 * AR5). A report with an `is` filter on a session column scans the sessions of those values
 * through `(site_id, column, sample, day)`: the filter's rows are adjacent, and a sampled scan's
 * `sample in (...)` picks whole runs of them. The events' session index also carries the columns
 * the pages report reads (type, path, value), so its join from the filtered sessions to their
 * events reads the index alone. Existing data is converted by building the indexes.
 */
const FILTER_COLUMNS = [
  'country',
  'device',
  'browser',
  'os',
  'source',
  'entry_path',
  'referrer',
  'city',
  'language',
  'utm_source',
  'utm_medium',
  'utm_campaign',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of FILTER_COLUMNS)
    await db.schema.createIndex(`analytics_sessions_${column}_idx`).on('analytics_sessions').columns(['site_id', column, 'sample', 'day']).execute();
  await db.schema.dropIndex('analytics_events_session_idx').execute();
  await db.schema.createIndex('analytics_events_session_idx').on('analytics_events').columns(['session_id', 'ts', 'type', 'path', 'value']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of FILTER_COLUMNS) await db.schema.dropIndex(`analytics_sessions_${column}_idx`).execute();
  await db.schema.dropIndex('analytics_events_session_idx').execute();
  await db.schema.createIndex('analytics_events_session_idx').on('analytics_events').columns(['session_id', 'ts']).execute();
}
