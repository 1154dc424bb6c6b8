import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Sites, users, API tokens and notification settings (issue 2). */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);

  await db.schema
    .createTable('sites')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('domain', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('logo_url', 'text')
    .addColumn('favicon_url', 'text')
    .addColumn('timezone', 'text', (col) => col.notNull().defaultTo('UTC'))
    .addColumn('is_active', c.bool, c.boolDefault(true))
    .addColumn('show_branding', c.bool, c.boolDefault(true))
    .addColumn('preview_url', 'text')
    .addColumn('organization_id', 'text')
    .addColumn('public_key', 'text', (col) => col.notNull().unique())
    .addColumn('default_locale', 'text', (col) => col.notNull().defaultTo('en'))
    .addColumn('multi_language_enabled', c.bool, c.boolDefault(false))
    .addColumn('enabled_locales', c.json, c.jsonDefault(['en']))
    .addColumn('detection_enabled', c.bool, c.boolDefault(false))
    .addColumn('detection_order', c.json, c.jsonDefault(['cookie', 'browser']))
    .addColumn('cookie_name', 'text', (col) => col.notNull().defaultTo('cairn_locale'))
    .addColumn('cookie_max_age', 'integer', (col) => col.notNull().defaultTo(365))
    .addColumn('redirect_to_default', c.bool, c.boolDefault(false))
    .addColumn('hide_default_locale', c.bool, c.boolDefault(true))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('full_name', 'text', (col) => col.notNull())
    .addColumn('email', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('users_site_idx').on('users').columns(['site_id', 'created_at']).execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('secret_hash', 'text', (col) => col.notNull())
    .addColumn('scopes', c.json, (col) => col.notNull())
    .addColumn('last_used_at', c.timestamp)
    .addColumn('expires_at', c.timestamp)
    .addColumn('revoked_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('api_tokens_site_idx').on('api_tokens').columns(['site_id', 'created_at']).execute();

  await db.schema
    .createTable('notification_settings')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('form_submission', c.bool, c.boolDefault(true))
    .addColumn('new_review', c.bool, c.boolDefault(true))
    .addColumn('review_approved', c.bool, c.boolDefault(false))
    .addColumn('content_published', c.bool, c.boolDefault(false))
    .addColumn('recipient_emails', c.json, c.jsonDefault([]))
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['notification_settings', 'api_tokens', 'users', 'sites']) {
    await db.schema.dropTable(table).execute();
  }
}
