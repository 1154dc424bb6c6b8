import { sql, type Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Cookie consent (decisions CC1-CC4): each site's banner settings, the visitors' consent records
 * (append-only proof, the address truncated), and the daily counts written with each record, so
 * stats cost O(days) and outlive the records' retention.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema
    .createTable('cookie_consent_settings')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('enabled', c.bool, c.boolDefault(false))
    .addColumn('revision', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('log_retention_days', 'integer', (col) => col.notNull().defaultTo(365))
    // Every other field of CC1, as one document.
    .addColumn('settings', c.json, c.jsonDefault({}))
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();

  await c
    .serialId(db.schema.createTable('cookie_consents'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('consent_id', 'text', (col) => col.notNull())
    .addColumn('action', 'text', (col) => col.notNull())
    // The accepted category keys joined with ",": a category filter is one LIKE on ",<list>,".
    .addColumn('categories', 'text', (col) => col.notNull())
    .addColumn('services', c.json, c.jsonDefault({}))
    .addColumn('revision', 'integer', (col) => col.notNull())
    .addColumn('locale', 'text')
    .addColumn('page_url', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('cookie_consents_site_created_idx').on('cookie_consents').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('cookie_consents_site_consent_idx').on('cookie_consents').columns(['site_id', 'consent_id']).execute();

  await db.schema
    .createTable('cookie_consent_daily_counts')
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    // The site's calendar day (its timezone) of the records counted.
    .addColumn('day', 'text', (col) => col.notNull())
    // `action:<action>` or `category:<key>`.
    .addColumn('metric', 'text', (col) => col.notNull())
    .addColumn('n', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('cookie_consent_daily_counts_pk', ['site_id', 'day', 'metric'])
    .execute();

  // The public config is a cached delivery answer: other instances drop it when the settings change (P18, migration 0024).
  if (dialect === 'postgres') {
    await sql
      .raw(
        'create trigger cookie_consent_settings_notify_site_content after insert or update or delete on cookie_consent_settings for each row execute function cairn_notify_site_content()',
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cookie_consent_daily_counts').execute();
  await db.schema.dropTable('cookie_consents').execute();
  await db.schema.dropTable('cookie_consent_settings').execute();
}
