/**
 * What a site bundle holds, table by table, in the order an import writes them (a table's
 * references come before it). Declared here once, by hand from the migrations, because the two
 * databases cannot tell them apart by themselves (a boolean and a JSON column are `integer` and
 * `text` on SQLite); bundle-tables.test.ts fails when a table of the database is neither listed
 * here nor in NOT_BUNDLED, or a column neither carried nor in NOT_CARRIED, so nothing new is forgotten.
 *
 * Left out on purpose, never exported: API tokens (secrets), the webhook signing secrets and the
 * captcha secret (a new webhook secret is made on import; the target keeps its captcha secret),
 * the search-console connection (credentials), and every log or derived table that holds
 * visitors' addresses or is rebuilt by the service (NOT_BUNDLED says which and why).
 */
export type ColumnKind = 'plain' | 'bool' | 'json';

export type BundleRow = Record<string, unknown>;

export interface NaturalKey {
  columns: string[];
  /** Whether this key may name the row (an e-mail that is null names nothing). */
  when?: (row: BundleRow) => boolean;
}

export interface TableSpec {
  table: string;
  /** The row's own id: text made by the importer (`uuid`), or made by the database (`serial`); none for one-row-a-site and link tables. */
  id?: 'uuid' | 'serial';
  /** The columns a bundle carries and an import writes (never `id` and `site_id`). */
  columns: Record<string, ColumnKind>;
  /** Columns a bundle carries only to match rows (`users.is_owner`), never written. */
  matchOnly?: Record<string, ColumnKind>;
  /** Reference columns and the table they point at; their values are translated to the target's ids. */
  refs?: Record<string, string>;
  /** Ids held in a JSON column: column -> top-level key -> the table its ids (one or a list) belong to. */
  jsonRefs?: Record<string, Record<string, string>>;
  /** JSON columns holding field schemas: the ids in their dataSource fields' filters are translated (DATA_SOURCE_IDS). */
  dataSources?: string[];
  /** References without which the row means nothing: a row whose target is not in the bundle is dropped. */
  required?: string[];
  /** Rows of the target that a bundle row is, when no earlier import of the bundle said so (slug per locale, ...). None on a table without id: the site's one row. */
  natural?: NaturalKey[];
  /** A reference to the same table: the export writes parents before their children. */
  parent?: string;
  /** Values a row gets only when it is made, never compared (a fresh webhook secret). */
  onInsert?: 'webhook-secret';
  /** Columns whose values follow from others once references are translated. */
  derive?: (row: BundleRow) => void;
  /** The table's key column for the site (`id` for `sites` itself). */
  siteColumn?: 'id' | 'site_id';
  /** Columns (never null, unique together within a site) an id-less table is read in pages by, keyset instead of offset. */
  keyOrder?: string[];
  /** Only exported with --with-submissions. */
  optional?: 'submissions';
}

/** `'name slug schema:j is_active:b'` -> column kinds. */
function cols(list: string): Record<string, ColumnKind> {
  return Object.fromEntries(
    list
      .trim()
      .split(/\s+/)
      .map((c) => {
        const [name, kind] = c.split(':');
        return [name!, kind === 'b' ? 'bool' : kind === 'j' ? 'json' : 'plain'];
      }),
  );
}

const bySlug: NaturalKey[] = [{ columns: ['locale', 'slug'] }];
const stamps = 'created_at updated_at';

export const BUNDLE_TABLES: readonly TableSpec[] = [
  { table: 'roles', id: 'uuid', columns: cols(`slug name description scopes:j is_system:b ${stamps}`), natural: [{ columns: ['slug'] }] },
  {
    table: 'users',
    id: 'uuid',
    columns: cols(`full_name email role_id is_active:b ${stamps}`),
    matchOnly: cols('is_owner:b'),
    refs: { role_id: 'roles' },
    required: ['role_id'],
    // The bundle's owner is the target's owner: a site has exactly one, and it is never moved by an import.
    natural: [
      { columns: ['is_owner'], when: (r) => r.is_owner === true },
      { columns: ['email'], when: (r) => r.email != null },
    ],
  },
  {
    table: 'media_folders',
    id: 'uuid',
    columns: cols(`name name_key parent_id parent_key ${stamps}`),
    refs: { parent_id: 'media_folders' },
    parent: 'parent_id',
    derive: (r) => {
      r.parent_key = r.parent_id ?? '';
    },
    natural: [{ columns: ['parent_key', 'name_key'] }],
  },
  {
    table: 'media_files',
    id: 'uuid',
    columns: cols(
      `folder_id filename original_name mime_type size width height alt title description storage_key etag variant_widths:j focal_x focal_y deleted_at ${stamps}`,
    ),
    refs: { folder_id: 'media_folders' },
  },
  {
    table: 'sites',
    siteColumn: 'id',
    // Not the name, domain, slug, public key or state: those belong to the target site.
    columns: cols(
      'description logo_url favicon_url timezone show_branding:b preview_url default_locale multi_language_enabled:b enabled_locales:j detection_enabled:b detection_order:j cookie_name cookie_max_age redirect_to_default:b hide_default_locale:b',
    ),
    natural: [],
  },
  {
    table: 'notification_settings',
    columns: cols('form_submission:b new_review:b review_approved:b content_published:b recipient_emails:j updated_at'),
    natural: [],
  },
  { table: 'redirect_settings', columns: cols('log_retention_days anonymize_ip:b redirect_on_slug_change:b updated_at'), natural: [] },
  {
    table: 'seo_settings',
    columns: cols(
      `robots_rules:j robots_sitemap_link:b ai_crawlers default_priority default_changefreq include_contents_in_sitemap:b content_path_prefixes:j content_type_priorities:j blog_url_mode blog_prefix index_now_key index_now_enabled:b search_indexing_enabled:b llms_txt_enabled:b llms_site_description sitemap_index_enabled:b ${stamps}`,
    ),
    natural: [],
  },
  { table: 'spam_settings', columns: cols('blocked_words:j blocked_addresses:j captcha_provider captcha_verify_url captcha_site_key updated_at'), natural: [] },
  { table: 'cookie_consent_settings', columns: cols('enabled:b revision log_retention_days settings:j updated_at'), natural: [] },
  {
    table: 'analytics_settings',
    columns: cols('tracking_enabled:b raw_retention_days aggregate_retention_days excluded_paths:j excluded_ips:j updated_at'),
    natural: [],
  },
  { table: 'site_block_settings', columns: cols('staged_publishing:b updated_at'), natural: [] },
  {
    table: 'tags',
    id: 'serial',
    columns: cols(`name slug description locale translation_group ${stamps}`),
    natural: [...bySlug, { columns: ['locale', 'name'] }],
  },
  {
    table: 'categories',
    id: 'serial',
    columns: cols(
      `name slug description image parent_id locale translation_group sitemap_priority sitemap_changefreq content_mode schema:j schema_source ${stamps}`,
    ),
    refs: { parent_id: 'categories' },
    parent: 'parent_id',
    natural: bySlug,
  },
  {
    table: 'variables',
    id: 'serial',
    columns: cols(`key label value type description locale translation_group ${stamps}`),
    natural: [{ columns: ['locale', 'key'] }],
  },
  {
    table: 'single_types',
    id: 'serial',
    columns: cols(`slug name description locale data:j schema:j body:j body_html meta_title meta_description ${stamps}`),
    natural: bySlug,
  },
  {
    table: 'contents',
    id: 'serial',
    columns: cols(
      `type title slug status excerpt locale translation_group author_id featured_image_url featured_image_alt meta_title meta_description meta_keywords canonical_url og_image metadata:j custom_data:j structured_data:j scheduled_at published_at ${stamps}`,
    ),
    refs: { author_id: 'users' },
    natural: bySlug,
  },
  {
    table: 'content_bodies',
    columns: cols('content_id body:j body_html body_text'),
    refs: { content_id: 'contents' },
    required: ['content_id'],
    natural: [{ columns: ['content_id'] }],
    keyOrder: ['content_id'],
  },
  {
    table: 'content_categories',
    columns: cols('content_id category_id position'),
    refs: { content_id: 'contents', category_id: 'categories' },
    required: ['content_id', 'category_id'],
    natural: [{ columns: ['content_id', 'category_id'] }],
    keyOrder: ['content_id', 'category_id'],
  },
  {
    table: 'content_tags',
    columns: cols('content_id tag_id position'),
    refs: { content_id: 'contents', tag_id: 'tags' },
    required: ['content_id', 'tag_id'],
    natural: [{ columns: ['content_id', 'tag_id'] }],
    keyOrder: ['content_id', 'tag_id'],
  },
  {
    table: 'content_revisions',
    id: 'serial',
    columns: cols('content_id author_id action changes:j snapshot:j created_at'),
    refs: { content_id: 'contents', author_id: 'users' },
    // A restore brings the snapshot's categories and tags back: they must be the target's.
    jsonRefs: { snapshot: { categoryIds: 'categories', tagIds: 'tags' } },
    required: ['content_id'],
  },
  {
    table: 'forms',
    id: 'serial',
    columns: cols(
      `name slug description status locale translation_group schema:j settings:j notifications:j honeypot_enabled:b captcha_enabled:b success_message redirect_url submit_label closed_message submission_count ${stamps}`,
    ),
    natural: bySlug,
  },
  {
    table: 'form_submissions',
    id: 'serial',
    // Never the visitor's address.
    columns: cols('form_id status data:j search_text user_agent created_at updated_at'),
    refs: { form_id: 'forms' },
    required: ['form_id'],
    optional: 'submissions',
  },
  {
    table: 'site_blocks',
    id: 'serial',
    columns: cols(`name slug type status path locale translation_group schema:j data:j published_snapshot:j has_unpublished_changes:b published_at ${stamps}`),
    dataSources: ['schema', 'published_snapshot'],
    natural: bySlug,
  },
  {
    table: 'site_block_revisions',
    id: 'serial',
    columns: cols('site_block_id author_id action changes:j snapshot:j created_at'),
    refs: { site_block_id: 'site_blocks', author_id: 'users' },
    required: ['site_block_id'],
  },
  {
    table: 'media_references',
    columns: cols('media_id content_id site_block_id field'),
    refs: { media_id: 'media_files', content_id: 'contents', site_block_id: 'site_blocks' },
    required: ['media_id', 'content_id', 'site_block_id'],
    natural: [{ columns: ['media_id', 'content_id', 'site_block_id', 'field'] }],
  },
  {
    table: 'content_links_out',
    columns: cols('content_id site_block_id target_url internal:b'),
    refs: { content_id: 'contents', site_block_id: 'site_blocks' },
    required: ['content_id', 'site_block_id'],
    natural: [{ columns: ['content_id', 'site_block_id', 'target_url'] }],
  },
  {
    table: 'redirects',
    id: 'serial',
    columns: cols(`source_path source_hash target_url status_code is_regex:b is_active:b preserve_query_string:b note hit_count last_hit_at ${stamps}`),
    natural: [{ columns: ['source_hash'] }],
  },
  {
    table: 'sitemap_entries',
    id: 'uuid',
    columns: cols(`url url_hash is_external:b priority changefreq last_modified title ${stamps}`),
    natural: [{ columns: ['url_hash'] }],
  },
  { table: 'sitemap_rules', id: 'serial', columns: cols(`source_type source_value priority changefreq rule_order is_active:b ${stamps}`) },
  { table: 'sitemap_sources', id: 'serial', columns: cols(`name url is_active:b ${stamps}`) },
  {
    table: 'webhooks',
    id: 'serial',
    columns: cols(`url description events:j is_active:b consecutive_failures disabled_reason disabled_at ${stamps}`),
    onInsert: 'webhook-secret',
  },
];

/**
 * The filters of a dataSource field (decisions B2/B5) that hold ids, per source: filter -> the
 * table its ids (one or a list) belong to. A field's `source` group is written before
 * site_blocks (forms too), so the ids are known when a block is imported; a `siteBlocks` filter
 * naming a block written later in the same import keeps no id (decisions BX9).
 */
export const DATA_SOURCE_IDS: Record<string, Record<string, string>> = {
  contents: { categoryIds: 'categories', tagIds: 'tags', ids: 'contents', excludeIds: 'contents' },
  categories: { parentId: 'categories', ids: 'categories', excludeIds: 'categories' },
  tags: { ids: 'tags', excludeIds: 'tags' },
  variables: { ids: 'variables', excludeIds: 'variables' },
  forms: { ids: 'forms', excludeIds: 'forms' },
  siteBlocks: { ids: 'site_blocks', excludeIds: 'site_blocks' },
};

/** Tables a bundle leaves out, and why (the completeness test reads this). */
export const NOT_BUNDLED: Record<string, string> = {
  api_tokens: 'secrets: a token is made again on the target',
  idempotency_keys: 'stored answers to retried creates of the source instance, per token (tokens are not carried)',
  search_connections: 'credentials of the search console',
  search_keys: 'search-console data, synced again from the console',
  search_daily_totals: 'search-console data',
  search_daily_rows: 'search-console data',
  search_period_keys: 'search-console data',
  search_indexing_logs: 'a log of calls to the Indexing API',
  indexnow_logs: 'a log of IndexNow submissions',
  jobs: 'work of the source instance',
  outbox_events: 'events already delivered by the source',
  webhook_deliveries: 'the delivery log of the source',
  webhook_attempts: 'the delivery log of the source',
  redirect_logs: "visitors' hits, with their addresses",
  redirect_misses: "visitors' 404s",
  redirect_rule_versions: 'a count of changes to the rules, made anew by the first import into the site (decisions HN17)',
  cookie_consents: "visitors' consent records, with their (truncated) addresses",
  cookie_consent_daily_counts: "counts of visitors' consent records",
  content_counts: 'kept by triggers from contents',
  analytics_values: 'visitor analytics: raw events and their rollups stay with the instance that collected them',
  analytics_sessions: 'visitor analytics',
  analytics_events: 'visitor analytics',
  analytics_daily: 'visitor analytics',
  analytics_monthly: 'visitor analytics',
  analytics_pair_daily: 'visitor analytics',
  analytics_pair_monthly: 'visitor analytics',
  analytics_days: 'visitor analytics',
  analytics_salts: 'daily salts of visitor hashes (secrets)',
  bundle_id_map: "the target's own record of earlier imports",
  site_exports: 'export jobs of the source',
};

/** What the manifest's `groups` and the import's report call a table. */
export const groupName = (table: string) => table;

export const BUNDLE_FORMAT = 'cairn-site-bundle';
export const BUNDLE_FORMAT_VERSION = 1;

/** Columns of bundled tables a bundle does not carry (besides `id` and `site_id`), and why (the completeness test reads this). */
export const NOT_CARRIED: Record<string, Record<string, string>> = {
  sites: {
    name: "the target's own (a new site takes the bundle's unless --name)",
    domain: "the target's own",
    slug: 'unique among the sites of an instance',
    public_key: "the target's own key",
    is_active: "the target's own state",
    organization_id: "the target instance's",
    created_at: "the target's own",
    updated_at: "the target's own",
  },
  webhooks: { secret: 'a secret: made again on import', previous_secret: 'a secret', previous_secret_expires_at: 'goes with the previous secret' },
  spam_settings: { captcha_secret: 'a secret: the target keeps its own' },
  form_submissions: { ip_address: "a visitor's address" },
  seo_settings: {
    id: 'one row a site, found by site',
    index_now_last_verified_at: "the source's IndexNow state",
    index_now_submitted_until: "the source's IndexNow state",
  },
  contents: {
    search_head: 'PostgreSQL search vector, kept by a trigger',
    search_vector: 'PostgreSQL search vector, kept by a trigger',
    categories_list: 'kept by triggers from content_categories (migration 0048)',
    tags_list: 'kept by triggers from content_tags (migration 0048)',
  },
  content_bodies: { search_body: 'PostgreSQL generated column' },
};
