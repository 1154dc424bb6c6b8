import { sql, type Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Each content keeps its categories and tags as it shows them (`[{id, name, slug}]` in link
 * order) on its own row: `categories_list` and `tags_list` (issue 37 item 1, decisions PF11). A
 * list page or a read then takes them with the row instead of looking up every link row and its
 * category or tag (two thirds of a list page's database time).
 *
 * The normalised tables stay the truth (filters, counts, revisions, bundles); triggers keep the
 * lists from them, so no write path can forget one: a link inserted, deleted (a content's new
 * links, a category's or tag's deletion by cascade, a bundle import) or moved, and a category's or
 * tag's name or slug changed. The list is always recomputed whole from the link rows, never patched.
 * SQLite's triggers run per row; PostgreSQL's per statement on the link tables (a create's five
 * tags are one update of its row, not five row versions).
 */
type Link = {
  table: 'content_categories' | 'content_tags';
  ref: 'categories' | 'tags';
  column: 'category_id' | 'tag_id';
  list: 'categories_list' | 'tags_list';
};
const LINKS: Link[] = [
  { table: 'content_categories', ref: 'categories', column: 'category_id', list: 'categories_list' },
  { table: 'content_tags', ref: 'tags', column: 'tag_id', list: 'tags_list' },
];

/**
 * The list of the contents row in scope, from its link rows in their order: through the
 * (site_id, content_id, position) index of migration 0011, so no sort.
 */
const sqliteList = (l: Link) =>
  `(select json_group_array(json_object('id', r.id, 'name', r.name, 'slug', r.slug)) from
     (select k.id, k.name, k.slug from ${l.table} x join ${l.ref} k on k.id = x.${l.column}
       where x.site_id = contents.site_id and x.content_id = contents.id order by x.position) r)`;
const postgresList = (l: Link) =>
  `(select coalesce(jsonb_agg(jsonb_build_object('id', k.id, 'name', k.name, 'slug', k.slug) order by x.position), '[]'::jsonb)
     from ${l.table} x join ${l.ref} k on k.id = x.${l.column} where x.site_id = contents.site_id and x.content_id = contents.id)`;

const sqliteUp = (l: Link) => [
  `create trigger ${l.table}_list_ai after insert on ${l.table} begin
     update contents set ${l.list} = ${sqliteList(l)} where id = new.content_id; end`,
  `create trigger ${l.table}_list_ad after delete on ${l.table} begin
     update contents set ${l.list} = ${sqliteList(l)} where id = old.content_id; end`,
  `create trigger ${l.table}_list_au after update on ${l.table} begin
     update contents set ${l.list} = ${sqliteList(l)} where id in (old.content_id, new.content_id); end`,
  `create trigger ${l.ref}_list_au after update of name, slug on ${l.ref}
     when old.name is not new.name or old.slug is not new.slug begin
     update contents set ${l.list} = ${sqliteList(l)}
       where id in (select content_id from ${l.table} where site_id = new.site_id and ${l.column} = new.id); end`,
];

// One function per link table serves its three statement triggers: each names its changed rows
// `changed` (the new rows of an insert or update, the old rows of a delete).
const postgresUp = (l: Link) => [
  `create or replace function cairn_${l.table}_list() returns trigger language plpgsql as $$
   begin
     update contents set ${l.list} = ${postgresList(l)} where id in (select content_id from changed);
     return null;
   end $$`,
  `create trigger ${l.table}_list_ai after insert on ${l.table} referencing new table as changed
     for each statement execute function cairn_${l.table}_list()`,
  `create trigger ${l.table}_list_ad after delete on ${l.table} referencing old table as changed
     for each statement execute function cairn_${l.table}_list()`,
  `create trigger ${l.table}_list_au after update on ${l.table} referencing new table as changed
     for each statement execute function cairn_${l.table}_list()`,
  `create or replace function cairn_${l.ref}_list() returns trigger language plpgsql as $$
   begin
     update contents set ${l.list} = ${postgresList(l)}
       where id in (select content_id from ${l.table} where site_id = new.site_id and ${l.column} = new.id);
     return null;
   end $$`,
  `create trigger ${l.ref}_list_au after update of name, slug on ${l.ref} for each row
     when (old.name is distinct from new.name or old.slug is distinct from new.slug) execute function cairn_${l.ref}_list()`,
];

/** Every content's lists computed again from its link rows (the backfill; a bulk load that deferred the triggers). */
export const rebuildLinkLists = (dialect: MigrationDialect): string[] =>
  LINKS.map((l) => `update contents set ${l.list} = ${dialect === 'postgres' ? postgresList(l) : sqliteList(l)}`);

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  const pg = dialect === 'postgres';
  for (const l of LINKS)
    await db.schema
      .alterTable('contents')
      .addColumn(l.list, c.json, (col) => col.notNull().defaultTo(pg ? sql`'[]'::jsonb` : '[]'))
      .execute();
  for (const statement of rebuildLinkLists(dialect)) await sql.raw(statement).execute(db);
  for (const l of LINKS) for (const statement of pg ? postgresUp(l) : sqliteUp(l)) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  for (const l of LINKS) {
    if (dialect === 'postgres') {
      for (const t of ['ai', 'ad', 'au']) await sql.raw(`drop trigger if exists ${l.table}_list_${t} on ${l.table}`).execute(db);
      await sql.raw(`drop trigger if exists ${l.ref}_list_au on ${l.ref}`).execute(db);
      await sql.raw(`drop function if exists cairn_${l.table}_list()`).execute(db);
      await sql.raw(`drop function if exists cairn_${l.ref}_list()`).execute(db);
    } else {
      for (const t of ['ai', 'ad', 'au']) await sql.raw(`drop trigger if exists ${l.table}_list_${t}`).execute(db);
      await sql.raw(`drop trigger if exists ${l.ref}_list_au`).execute(db);
    }
    await db.schema.alterTable('contents').dropColumn(l.list).execute();
  }
}
