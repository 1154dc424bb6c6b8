/**
 * Every unique constraint of the migrations, with the request field a clash is about and the
 * catalog code it answers. A service checks its rules first and names the field itself; this
 * table answers the races between that check and the write, the same on both databases:
 * PostgreSQL names the constraint (`error.constraint`), SQLite the table and columns
 * ("UNIQUE constraint failed: tags.site_id, tags.locale, tags.slug").
 * Constraints no request can clash on (generated ids and keys, one settings row per site,
 * upserts) answer `UNIQUE_VIOLATION` on `body`, as does a primary key.
 */
export type UniqueCode = 'SLUG_TAKEN' | 'NAME_TAKEN' | 'KEY_TAKEN' | 'PATH_TAKEN' | 'SOURCE_PATH_TAKEN' | 'EMAIL_TAKEN' | 'UNIQUE_VIOLATION';

export interface UniqueConstraint {
  /** The name PostgreSQL reports: the index name, or `<table>_<column>_key` for a unique column. */
  name: string;
  table: string;
  /** In index order, as SQLite reports them. */
  columns: readonly string[];
  /** The request field the clash is about; null when no request sends the value. */
  field: string | null;
  code: UniqueCode;
}

const taken = (name: string, table: string, columns: string[], field: string | null, code: UniqueCode): UniqueConstraint => ({
  name,
  table,
  columns,
  field,
  code,
});
const internal = (name: string, table: string, columns: string[]) => taken(name, table, columns, null, 'UNIQUE_VIOLATION');

export const UNIQUE_CONSTRAINTS: readonly UniqueConstraint[] = [
  taken('sites_slug_key', 'sites', ['slug'], 'slug', 'SLUG_TAKEN'),
  internal('sites_public_key_key', 'sites', ['public_key']),
  taken('tags_site_locale_slug_uq', 'tags', ['site_id', 'locale', 'slug'], 'slug', 'SLUG_TAKEN'),
  taken('tags_site_locale_name_uq', 'tags', ['site_id', 'locale', 'name'], 'name', 'NAME_TAKEN'),
  taken('categories_site_locale_slug_uq', 'categories', ['site_id', 'locale', 'slug'], 'slug', 'SLUG_TAKEN'),
  taken('variables_site_locale_key_uq', 'variables', ['site_id', 'locale', 'key'], 'key', 'KEY_TAKEN'),
  taken('single_types_site_locale_slug_uq', 'single_types', ['site_id', 'locale', 'slug'], 'slug', 'SLUG_TAKEN'),
  internal('jobs_site_key_uq', 'jobs', ['site_id', 'key']),
  taken('contents_site_locale_slug_uq', 'contents', ['site_id', 'locale', 'slug'], 'slug', 'SLUG_TAKEN'),
  internal('webhook_deliveries_site_message_uq', 'webhook_deliveries', ['site_id', 'message_id']),
  taken('redirects_site_source_uq', 'redirects', ['site_id', 'source_hash'], 'sourcePath', 'SOURCE_PATH_TAKEN'),
  internal('redirect_misses_site_path_uq', 'redirect_misses', ['site_id', 'path_hash']),
  internal('seo_settings_site_id_key', 'seo_settings', ['site_id']),
  taken('sitemap_entries_site_url_uq', 'sitemap_entries', ['site_id', 'url_hash'], 'url', 'UNIQUE_VIOLATION'),
  taken('site_blocks_site_locale_slug_uq', 'site_blocks', ['site_id', 'locale', 'slug'], 'slug', 'SLUG_TAKEN'),
  taken('site_blocks_site_locale_path_uq', 'site_blocks', ['site_id', 'locale', 'path'], 'path', 'PATH_TAKEN'),
  taken('forms_site_locale_slug_uq', 'forms', ['site_id', 'locale', 'slug'], 'slug', 'SLUG_TAKEN'),
  taken('media_folders_name_uq', 'media_folders', ['site_id', 'parent_key', 'name_key'], 'name', 'NAME_TAKEN'),
  // A role's slug is made from its name once, so two roles racing on a slug raced on a name.
  taken('roles_site_slug_unique', 'roles', ['site_id', 'slug'], 'name', 'NAME_TAKEN'),
  taken('users_site_email_unique', 'users', ['site_id', 'email'], 'email', 'EMAIL_TAKEN'),
  // One owner a site (partial index on is_owner): only `cairn users set-owner` moves it.
  internal('users_site_owner_unique', 'users', ['site_id']),
  // Search-console dimension keys, upserted by the sync.
  internal('search_keys_key_unique', 'search_keys', ['site_id', 'kind', 'key']),
  // Analytics: the dimension dictionary (upserted), and import ids, which a re-run skips before inserting.
  internal('analytics_values_unique', 'analytics_values', ['site_id', 'dim', 'value']),
  internal('analytics_sessions_import_idx', 'analytics_sessions', ['site_id', 'import_key']),
  internal('analytics_events_import_idx', 'analytics_events', ['site_id', 'import_key']),
  // Idempotency keys (decisions HR4): a clash is two requests racing on one key, answered by the plugin itself.
  internal('idempotency_keys_site_token_key_uq', 'idempotency_keys', ['site_id', 'token_id', 'key']),
];

const byName = new Map(UNIQUE_CONSTRAINTS.map((c) => [c.name, c]));
const byColumns = new Map(UNIQUE_CONSTRAINTS.map((c) => [columnsKey(c.table, c.columns), c]));

function columnsKey(table: string, columns: readonly string[]): string {
  return `${table}(${columns.join(',')})`;
}

/** The constraint PostgreSQL names in a 23505 error. */
export function uniqueByName(name: string): UniqueConstraint | undefined {
  return byName.get(name);
}

/** The constraint of SQLite's message, "UNIQUE constraint failed: t.a, t.b" (no index is on expressions). */
export function uniqueBySqliteMessage(message: string): UniqueConstraint | undefined {
  const failed = message.replace(/^.*constraint failed:\s*/, '');
  const columns = failed.split(',').map((c) => c.trim().split('.'));
  const table = columns[0]?.[0];
  if (!table || columns.some((c) => c.length !== 2 || c[0] !== table)) return undefined;
  return byColumns.get(
    columnsKey(
      table,
      columns.map((c) => c[1]!),
    ),
  );
}
