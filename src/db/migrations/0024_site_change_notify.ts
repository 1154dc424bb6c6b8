import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * PostgreSQL: every change to what delivery reads answer (contents and their links, categories,
 * tags, variables, single types, site blocks, forms, media, the site's settings) is announced on
 * the channel `cairn_site_content` with the site id, from whichever process made it (another
 * instance, the worker, SQL by hand), so every instance drops that site's cached delivery answers
 * (decisions P18). Notifications with the same payload in one transaction are delivered once, at
 * commit. SQLite needs nothing here: processes sharing a file see each other's commits through
 * `PRAGMA data_version` (db/connect.ts).
 */
const SITE_TABLES = [
  'contents',
  'content_categories',
  'content_tags',
  'categories',
  'tags',
  'variables',
  'single_types',
  'site_blocks',
  'site_block_settings',
  'forms',
  'media_files',
  'media_folders',
];

const POSTGRES_UP = [
  `create or replace function cairn_notify_site_content() returns trigger language plpgsql as $$
   begin
     perform pg_notify('cairn_site_content', coalesce(new.site_id, old.site_id)::text);
     return null;
   end $$`,
  `create or replace function cairn_notify_site() returns trigger language plpgsql as $$
   begin
     perform pg_notify('cairn_site_content', coalesce(new.id, old.id)::text);
     return null;
   end $$`,
  ...SITE_TABLES.map(
    (table) =>
      `create trigger ${table}_notify_site_content after insert or update or delete on ${table} for each row execute function cairn_notify_site_content()`,
  ),
  `create trigger sites_notify_site_content after update on sites for each row execute function cairn_notify_site()`,
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const statement of POSTGRES_UP) await sql.raw(statement).execute(db);
}
