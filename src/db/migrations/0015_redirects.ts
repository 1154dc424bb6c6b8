import { sql, type Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Redirects (decisions R1, R2, R3-R9): the rules, their hit log, the log of paths that matched
 * none (404s), and each site's redirect settings.
 *
 * Source paths are up to 2,048 characters, which PostgreSQL's btree cannot always hold in a
 * unique index (2,704 bytes per entry, and a path may be 4 bytes a character): uniqueness and
 * lookups go through `source_hash`, the SHA-256 of the rule's matching key, instead.
 */
const POSTGRES_UP = [
  // Every instance keeps a site's compiled rules in memory; a change to a rule (not to its hit
  // counter) tells them all to forget that site's rules at once. Notifications with the same
  // payload in one transaction are delivered once, so an import of 10,000 rows sends one.
  `create or replace function cairn_notify_redirects() returns trigger language plpgsql as $$
   begin
     perform pg_notify('cairn_redirects', coalesce(new.site_id, old.site_id)::text);
     return null;
   end $$`,
  `create trigger redirects_notify_insert after insert on redirects for each row execute function cairn_notify_redirects()`,
  `create trigger redirects_notify_delete after delete on redirects for each row execute function cairn_notify_redirects()`,
  `create trigger redirects_notify_update after update on redirects for each row
     when (old.hit_count is not distinct from new.hit_count) execute function cairn_notify_redirects()`,
  `create trigger redirect_settings_notify after insert or update on redirect_settings for each row execute function cairn_notify_redirects()`,
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('redirects'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('source_path', 'text', (col) => col.notNull())
    .addColumn('source_hash', 'text', (col) => col.notNull())
    .addColumn('target_url', 'text', (col) => col.notNull())
    .addColumn('status_code', 'integer', (col) => col.notNull().defaultTo(301))
    .addColumn('is_regex', c.bool, c.boolDefault(false))
    .addColumn('is_active', c.bool, c.boolDefault(true))
    .addColumn('preserve_query_string', c.bool, c.boolDefault(false))
    .addColumn('note', 'text')
    .addColumn('hit_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_hit_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('redirects_site_source_uq').on('redirects').columns(['site_id', 'source_hash']).unique().execute();
  await db.schema.createIndex('redirects_site_created_idx').on('redirects').columns(['site_id', 'created_at']).execute();

  await c
    .serialId(db.schema.createTable('redirect_logs'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('redirect_id', 'integer', (col) => col.notNull().references('redirects.id').onDelete('cascade'))
    .addColumn('referrer', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('redirect_logs_site_redirect_idx').on('redirect_logs').columns(['site_id', 'redirect_id', 'id']).execute();
  await db.schema.createIndex('redirect_logs_redirect_idx').on('redirect_logs').columns(['redirect_id']).execute();
  await db.schema.createIndex('redirect_logs_site_created_idx').on('redirect_logs').columns(['site_id', 'created_at']).execute();

  await c
    .serialId(db.schema.createTable('redirect_misses'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('path', 'text', (col) => col.notNull())
    .addColumn('path_hash', 'text', (col) => col.notNull())
    .addColumn('hits', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_referrer', 'text')
    .addColumn('first_seen_at', c.timestamp, (col) => col.notNull())
    .addColumn('last_seen_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('redirect_misses_site_path_uq').on('redirect_misses').columns(['site_id', 'path_hash']).unique().execute();
  await db.schema.createIndex('redirect_misses_site_hits_idx').on('redirect_misses').columns(['site_id', 'hits', 'id']).execute();
  await db.schema.createIndex('redirect_misses_site_seen_idx').on('redirect_misses').columns(['site_id', 'last_seen_at']).execute();

  await db.schema
    .createTable('redirect_settings')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('log_retention_days', 'integer', (col) => col.notNull().defaultTo(90))
    .addColumn('anonymize_ip', c.bool, c.boolDefault(true))
    .addColumn('redirect_on_slug_change', c.bool, c.boolDefault(false))
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();

  if (dialect === 'postgres') for (const statement of POSTGRES_UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['redirect_settings', 'redirect_misses', 'redirect_logs', 'redirects']) await db.schema.dropTable(t).execute();
}
