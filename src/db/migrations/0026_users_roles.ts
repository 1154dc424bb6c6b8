import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Users, roles and API tokens (issue 30, decisions U1-U4).
 *
 * - `roles`: named scope lists per site, seeded for every existing site (owner, administrator,
 *   editor, author, viewer). The scope catalog is copied here as it stands today: migrations
 *   import nothing from the app, and a later catalog change must not change what this did.
 * - `users` gain `role_id`, `is_active`, `is_owner`; e-mails are lower-cased and unique per site.
 *   Each site's oldest user becomes its owner (role `owner`, every scope), every other user gets
 *   `administrator` (every scope but `sites.delete`, which no endpoint uses), so no existing
 *   token loses power. Of e-mails equal but for case within a site, the oldest user keeps it.
 *   SQLite cannot add a NOT NULL reference column to a filled table, so there `role_id` is
 *   nullable in the schema and always set by the app; PostgreSQL enforces NOT NULL.
 * - `api_tokens` gain `description`, `updated_at`, `regenerated_at` and `created_by_token_id`
 *   (the token that made it, for audit; no reference, so purging a token keeps the record).
 * - PostgreSQL: the token trigger of 0013 also fires on a changed `secret_hash` (regenerate), and
 *   changes of a role's scopes, a user's role or a user's activity announce `*` on
 *   `cairn_api_tokens`, so every instance forgets its cached tokens (decisions H23, U3).
 */
const CATALOG = [
  'sites.view sites.create sites.update sites.delete sites.manage',
  'contents.view contents.view.own contents.create contents.update contents.update.own contents.delete contents.delete.own contents.publish contents.publish.own',
  'media.view media.upload media.update media.delete',
  'categories.view categories.create categories.update categories.delete',
  'tags.view tags.create tags.update tags.delete',
  'single_types.view single_types.create single_types.update single_types.delete',
  'site_blocks.view site_blocks.create site_blocks.update site_blocks.delete site_blocks.publish site_blocks.schema',
  'webhooks.view webhooks.create webhooks.update webhooks.delete webhooks.test',
  'api_tokens.view api_tokens.create api_tokens.update api_tokens.delete api_tokens.regenerate',
  'forms.view forms.create forms.update forms.delete forms.submissions.view forms.submissions.delete forms.submissions.export',
  'reviews.view reviews.create reviews.update reviews.delete reviews.moderate reviews.import reviews.export reviews.settings',
  'spam.settings.view spam.settings.update',
  'seo.view seo.update',
  'sitemap.view sitemap.create sitemap.update sitemap.delete sitemap.import sitemap.export',
  'redirects.view redirects.create redirects.update redirects.delete redirects.import redirects.export',
  'users.view users.create users.update users.delete users.manage_roles roles.view roles.create roles.update roles.delete permissions.view permissions.assign',
  'analytics.view analytics.export analytics.settings analytics.gsc',
  'variables.view variables.create variables.update variables.delete',
  'cookie_consent.view cookie_consent.update cookie_consent.logs cookie_consent.export',
  'ai.generate',
  'notifications.settings.view notifications.settings.update',
  'products.view products.view.own products.create products.update products.update.own products.delete products.delete.own products.publish products.publish.own',
  'collections.view collections.create collections.update collections.delete product_categories.view product_categories.create product_categories.update product_categories.delete calendars.view calendars.create calendars.update calendars.delete',
  'orders.view orders.create orders.update orders.cancel orders.refund orders.fulfill orders.export orders.manage_returns',
  'returns.view returns.view.own returns.create returns.update returns.delete',
  'customers.view customers.create customers.update customers.delete customers.groups customers.export',
  'payments.view payments.capture payments.refund',
  'inventory.view inventory.update inventory.transfer inventory.export',
  'promotions.view promotions.create promotions.update promotions.delete promotions.analytics',
  'shipping.view shipping.create shipping.update shipping.delete shipping.zones',
  'regions.view regions.create regions.update regions.delete taxes.view taxes.create taxes.update taxes.delete',
  'pricing.view pricing.create pricing.update pricing.delete price_lists.view price_lists.create price_lists.update price_lists.delete campaigns.view campaigns.create campaigns.update campaigns.delete',
  'gift_cards.view gift_cards.create gift_cards.update gift_cards.delete gift_cards.redeem',
  'carts.view carts.create carts.update carts.delete carts.complete',
  'sales_channels.view sales_channels.create sales_channels.update sales_channels.delete',
  'commerce_settings.view commerce_settings.update commerce_settings.payments commerce_analytics.view commerce_analytics.export',
  'invoices.view invoices.create invoices.download credit_notes.create invoicing.settings.view invoicing.settings.update vat_rates.view vat_rates.update',
].flatMap((line) => line.split(' '));

const EDITOR_AREAS = ['contents', 'media', 'categories', 'tags', 'single_types', 'site_blocks', 'variables', 'forms', 'seo', 'sitemap', 'redirects'];
const AUTHOR = [
  'contents.view',
  'contents.create',
  'contents.update.own',
  'contents.delete.own',
  'contents.publish.own',
  'media.view',
  'media.upload',
  'categories.view',
  'tags.view',
  'site_blocks.view',
];

const SEEDS = [
  { slug: 'owner', name: 'Owner', system: true, scopes: CATALOG, description: 'Every scope; cannot be changed or deleted.' },
  {
    slug: 'administrator',
    name: 'Administrator',
    system: false,
    scopes: CATALOG.filter((s) => s !== 'sites.delete'),
    description: 'Every scope but deleting the site.',
  },
  {
    slug: 'editor',
    name: 'Editor',
    system: false,
    scopes: CATALOG.filter((s) => EDITOR_AREAS.includes(s.split('.')[0]!)),
    description: 'Contents, media, forms, SEO, sitemap and redirects: every action.',
  },
  { slug: 'author', name: 'Author', system: false, scopes: AUTHOR, description: 'Writes and publishes their own contents; reads what they need.' },
  { slug: 'viewer', name: 'Viewer', system: false, scopes: CATALOG.filter((s) => s.endsWith('.view')), description: 'Reads everything, changes nothing.' },
];

const POSTGRES_UP = [
  'drop trigger api_tokens_notify_update on api_tokens',
  `create trigger api_tokens_notify_update after update on api_tokens for each row
     when (old.revoked_at is distinct from new.revoked_at or old.expires_at is distinct from new.expires_at
           or old.scopes is distinct from new.scopes or old.secret_hash is distinct from new.secret_hash)
     execute function cairn_notify_api_tokens()`,
  `create or replace function cairn_notify_api_tokens_all() returns trigger language plpgsql as $$
   begin
     perform pg_notify('cairn_api_tokens', '*');
     return null;
   end $$`,
  `create trigger roles_notify_api_tokens after update on roles for each row
     when (old.scopes is distinct from new.scopes) execute function cairn_notify_api_tokens_all()`,
  `create trigger users_notify_api_tokens after update on users for each row
     when (old.role_id is distinct from new.role_id or old.is_active is distinct from new.is_active)
     execute function cairn_notify_api_tokens_all()`,
  'alter table users alter column role_id set not null',
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema
    .createTable('roles')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('scopes', c.json, (col) => col.notNull())
    .addColumn('is_system', c.bool, c.boolDefault(false))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('roles_site_slug_unique').on('roles').columns(['site_id', 'slug']).unique().execute();

  await db.schema
    .alterTable('users')
    .addColumn('role_id', 'text', (col) => col.references('roles.id'))
    .execute();
  await db.schema.alterTable('users').addColumn('is_active', c.bool, c.boolDefault(true)).execute();
  await db.schema.alterTable('users').addColumn('is_owner', c.bool, c.boolDefault(false)).execute();
  for (const column of ['description', 'created_by_token_id']) await db.schema.alterTable('api_tokens').addColumn(column, 'text').execute();
  for (const column of ['updated_at', 'regenerated_at']) await db.schema.alterTable('api_tokens').addColumn(column, c.timestamp).execute();
  await db.updateTable('api_tokens').set({ updated_at: sql`created_at` }).execute();

  const at = new Date().toISOString();
  const sites = await db.selectFrom('sites').select('id').execute();
  for (const site of sites) {
    const ids: Record<string, string> = {};
    for (const seed of SEEDS) {
      ids[seed.slug] = randomUUID();
      await db
        .insertInto('roles')
        .values({
          id: ids[seed.slug],
          site_id: site.id,
          slug: seed.slug,
          name: seed.name,
          description: seed.description,
          scopes: JSON.stringify(seed.scopes),
          is_system: dialect === 'postgres' ? seed.system : Number(seed.system),
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
    await db.updateTable('users').set({ role_id: ids.administrator }).where('site_id', '=', site.id).execute();
    const oldest = await db.selectFrom('users').select('id').where('site_id', '=', site.id).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    if (oldest) {
      await db
        .updateTable('users')
        .set({ role_id: ids.owner, is_owner: dialect === 'postgres' ? true : 1 })
        .where('id', '=', oldest.id)
        .execute();
    }
  }

  await db.updateTable('users').set({ email: sql`lower(trim(email))` }).where('email', 'is not', null).execute();
  await db.updateTable('users').set({ email: null }).where('email', '=', '').execute();
  // Of e-mails equal but for case, the oldest user of the site keeps it.
  await sql`update users set email = null where email is not null and exists (
    select 1 from users older where older.site_id = users.site_id and older.email = users.email
      and (older.created_at < users.created_at or (older.created_at = users.created_at and older.id < users.id)))`.execute(db);
  await db.schema.createIndex('users_site_email_unique').on('users').columns(['site_id', 'email']).unique().execute();
  await db.schema.createIndex('users_site_role_idx').on('users').columns(['site_id', 'role_id']).execute();
  await db.schema
    .createIndex('users_site_owner_unique')
    .on('users')
    .column('site_id')
    .unique()
    .where(sql.ref('is_owner'), '=', dialect === 'postgres' ? sql.lit(true) : sql.lit(1))
    .execute();
  await db.schema.createIndex('api_tokens_site_user_idx').on('api_tokens').columns(['site_id', 'user_id']).execute();

  if (dialect === 'postgres') for (const statement of POSTGRES_UP) await sql.raw(statement).execute(db);
}
