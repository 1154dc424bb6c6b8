import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Forms and their submissions (spec "Forms", decisions F1-F3, G10, G14), and each site's spam
 * settings. `submission_count` (non-spam submissions) is kept by the writes that change it, in
 * their transaction, so lists never count submissions.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('forms'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('draft'))
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('translation_group', 'text', (col) => col.notNull())
    .addColumn('schema', c.json, c.jsonDefault([]))
    .addColumn('settings', c.json, c.jsonDefault({}))
    .addColumn('notifications', c.json, c.jsonDefault({}))
    .addColumn('honeypot_enabled', c.bool, c.boolDefault(true))
    .addColumn('captcha_enabled', c.bool, c.boolDefault(false))
    .addColumn('success_message', 'text')
    .addColumn('redirect_url', 'text')
    .addColumn('submit_label', 'text')
    .addColumn('closed_message', 'text')
    .addColumn('submission_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('forms_site_locale_slug_uq').on('forms').columns(['site_id', 'locale', 'slug']).unique().execute();
  await db.schema.createIndex('forms_site_created_idx').on('forms').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('forms_site_group_idx').on('forms').columns(['site_id', 'translation_group']).execute();

  await c
    .serialId(db.schema.createTable('form_submissions'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('form_id', 'integer', (col) => col.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('new'))
    .addColumn('data', c.json, (col) => col.notNull())
    // The submitted values as one lower-case text, for the inbox search.
    .addColumn('search_text', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp)
    .execute();
  await db.schema.createIndex('form_submissions_form_created_idx').on('form_submissions').columns(['site_id', 'form_id', 'created_at']).execute();
  await db.schema.createIndex('form_submissions_form_status_idx').on('form_submissions').columns(['site_id', 'form_id', 'status', 'created_at']).execute();

  await db.schema
    .createTable('spam_settings')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('blocked_words', c.json, c.jsonDefault([]))
    .addColumn('blocked_addresses', c.json, c.jsonDefault([]))
    .addColumn('captcha_provider', 'text')
    .addColumn('captcha_verify_url', 'text')
    .addColumn('captcha_secret', 'text')
    .addColumn('captcha_site_key', 'text')
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('spam_settings').execute();
  await db.schema.dropTable('form_submissions').execute();
  await db.schema.dropTable('forms').execute();
}
