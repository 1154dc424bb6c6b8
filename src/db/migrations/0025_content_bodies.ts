import { sql, type Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * The bodies of contents move out of the contents row into `content_bodies` (issue 15 item 5,
 * decisions P21): `body` (ProseMirror JSON), `body_html` and `body_text` were ~17 KB in front of
 * `published_at`, `created_at` and `updated_at`, so every summary, list and ranking read of
 * SQLite followed overflow pages to reach a date. Every existing body is copied before the
 * columns are dropped.
 *
 * `content_bodies` carries `site_id` like every table; its key is the content's id and it goes
 * with its content or its site (cascade).
 *
 * SQLite: `contents_fts` becomes an FTS5 table with its own copy of title, slug and body text
 * (no longer external content on `contents`). Snippets and highlights are then read from the FTS
 * table's 5 KB row instead of the 17 KB contents row, and the triggers change it by rowid, so no
 * trigger has to repeat the exact old text FTS5's external-content `delete` needs.
 *
 * PostgreSQL: `search_body` (the folded body text) moves to `content_bodies` as a generated
 * column. `contents.search_vector` cannot stay generated (it needs the body of another table), so
 * triggers keep it: a change of title or slug recomputes it from the row and the stored folded
 * body, a change of body text from `search_head` (title and slug, still generated) and the new
 * body. The vector is the same as before: weights A title, B slug, C body.
 */

const SQLITE_UP = [
  'drop trigger contents_fts_ai',
  'drop trigger contents_fts_ad',
  'drop trigger contents_fts_au',
  'drop table contents_fts',
  'alter table contents drop column body',
  'alter table contents drop column body_html',
  'alter table contents drop column body_text',
  `create virtual table contents_fts using fts5(title, slug, body_text, tokenize='unicode61 remove_diacritics 2')`,
  `insert into contents_fts(rowid, title, slug, body_text)
     select c.id, c.title, replace(c.slug, '-', ' '), b.body_text from contents c join content_bodies b on b.content_id = c.id`,
  // A content enters the index with its body (inserted right after the contents row).
  `create trigger content_bodies_fts_ai after insert on content_bodies begin
     insert into contents_fts(rowid, title, slug, body_text)
       select new.content_id, c.title, replace(c.slug, '-', ' '), new.body_text from contents c where c.id = new.content_id;
   end`,
  `create trigger content_bodies_fts_au after update of body_text on content_bodies begin
     update contents_fts set body_text = new.body_text where rowid = new.content_id;
   end`,
  `create trigger contents_fts_au after update of title, slug on contents begin
     update contents_fts set title = new.title, slug = replace(new.slug, '-', ' ') where rowid = new.id;
   end`,
  `create trigger contents_fts_ad after delete on contents begin
     delete from contents_fts where rowid = old.id;
   end`,
];

const POSTGRES_UP = [
  // The generated search columns read body_text: dropped first (the GIN index goes with the vector).
  'alter table contents drop column search_vector, drop column search_body',
  'alter table contents drop column body, drop column body_html, drop column body_text',
  'alter table contents add column search_vector tsvector',
  `update contents c set search_vector = c.search_head || setweight(to_tsvector('simple', b.search_body), 'C')
     from content_bodies b where b.content_id = c.id`,
  // As in migration 0009: no pending list.
  'create index contents_search_idx on contents using gin (search_vector) with (fastupdate = off)',
  `create function cairn_contents_search_vector() returns trigger language plpgsql as $$
   begin
     new.search_vector :=
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(new.title, ''))), 'A') ||
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(new.slug, ''))), 'B') ||
       setweight(to_tsvector('simple', coalesce((select b.search_body from content_bodies b where b.content_id = new.id), '')), 'C');
     return new;
   end $$`,
  `create trigger contents_search_vector before insert or update of title, slug on contents
     for each row execute function cairn_contents_search_vector()`,
  `create function cairn_content_bodies_search() returns trigger language plpgsql as $$
   begin
     update contents set search_vector = search_head || setweight(to_tsvector('simple', new.search_body), 'C')
       where id = new.content_id;
     return null;
   end $$`,
  `create trigger content_bodies_search after insert or update of body_text on content_bodies
     for each row execute function cairn_content_bodies_search()`,
  // Delivery caches hear of a body's change like of its row's (migration 0024).
  `create trigger content_bodies_notify_site_content after insert or update or delete on content_bodies
     for each row execute function cairn_notify_site_content()`,
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema
    .createTable('content_bodies')
    .addColumn('content_id', 'integer', (col) => col.primaryKey().references('contents.id').onDelete('cascade'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('body', c.json)
    .addColumn('body_html', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('body_text', 'text', (col) => col.notNull().defaultTo(''))
    .$call((t) =>
      dialect === 'postgres' ? t.addColumn('search_body', 'text', (col) => col.generatedAlwaysAs(sql`cairn_search_fold(coalesce(body_text, ''))`).stored()) : t,
    )
    .execute();
  await sql`insert into content_bodies (content_id, site_id, body, body_html, body_text)
    select id, site_id, body, body_html, body_text from contents`.execute(db);
  for (const statement of dialect === 'postgres' ? POSTGRES_UP : SQLITE_UP) await sql.raw(statement).execute(db);
}
