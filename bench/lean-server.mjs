// The lean reference of `npm run bench` (issue 15 item 7): what a developer would hand-write to
// serve the same contents endpoints with the same answers' shapes, and nothing more. Fastify and
// better-sqlite3, a schema of its own made for these answers, prepared statements, one statement
// per answer:
//
// - `posts` holds each post's summary columns first and its bodies last (a summary read stays on
//   the row's first page), with its categories, tags and author's name denormalised as JSON text;
// - `posts_fts` is an FTS5 table of title and text: a search is one statement that yields the
//   page with its highlights and the total, ranked by bm25 with the title weighted;
// - a create renders the markdown to HTML with markdown-it (raw HTML off, so it is safe), stores
//   one row (the markdown as its one body, no document JSON) and its index entry in one
//   transaction, and keeps no revision.
//
// Its rows are copied at start from the bench's seeded Cairn database (DATABASE_URL), so both
// serve the same 10,000 posts, bodies and HTML. No auth, no rate limit, no validation beyond what
// the create needs, no multi-site: every saving a lean server can make shows in the ratio.
//
// `node bench/lean-server.mjs` with PORT, DATABASE_URL and CAIRN_DATA_DIR (its own file goes there).
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import MarkdownIt from 'markdown-it';
import { detailJson, POST_COLUMNS, pageMeta, pageOf, summary, summaryJson } from './lean-answers.mjs';

const SCHEMA = `
create table posts (
  id integer primary key,${POST_COLUMNS}
);
create unique index posts_slug on posts (locale, slug);
create index posts_created on posts (created_at desc, id desc);
create index posts_group on posts (translation_group);
create virtual table posts_fts using fts5(title, body_text, tokenize = 'unicode61 remove_diacritics 2');
insert into posts_fts (posts_fts, rank) values ('rank', 'bm25(10.0, 1.0)');
`;

/** Copies the seeded site's posts out of Cairn's file into this schema (once, at start). */
function copyFrom(db, cairnFile) {
  db.prepare('attach database ? as cairn').run(cairnFile);
  const site = db.prepare('select id from cairn.sites order by created_at limit 1').get();
  db.transaction(() => {
    db.prepare(`
      insert into posts
      select c.id, c.slug, c.locale, c.title, c.excerpt, c.status, c.translation_group, c.author_id, u.full_name,
        c.featured_image_url, c.featured_image_alt, c.published_at, c.scheduled_at, c.created_at, c.updated_at,
        (select json_group_array(json_object('id', k.id, 'name', k.name, 'slug', k.slug)) from
          (select k.id, k.name, k.slug from cairn.content_categories cc join cairn.categories k on k.id = cc.category_id
           where cc.content_id = c.id order by cc.position) k),
        (select json_group_array(json_object('id', t.id, 'name', t.name, 'slug', t.slug)) from
          (select t.id, t.name, t.slug from cairn.content_tags ct join cairn.tags t on t.id = ct.tag_id
           where ct.content_id = c.id order by ct.position) t),
        json_object('metaTitle', c.meta_title, 'metaDescription', c.meta_description, 'metaKeywords', c.meta_keywords,
          'canonicalUrl', c.canonical_url, 'ogImage', c.og_image),
        b.body, b.body_html
      from cairn.contents c left join cairn.users u on u.id = c.author_id join cairn.content_bodies b on b.content_id = c.id
      where c.site_id = ? order by c.id`).run(site.id);
    db.prepare(`insert into posts_fts (rowid, title, body_text)
      select c.id, c.title, b.body_text from cairn.contents c join cairn.content_bodies b on b.content_id = c.id where c.site_id = ?`).run(site.id);
  })();
  db.prepare('detach database cairn').run();
  db.pragma('optimize=0x10002');
}

// Parameters written `+?`: SQLite 3.54 prepares a statement again on every run when its planner
// read a bound LIMIT or a joined equality (decisions PF12); a lean server written today avoids it too.
const SQL = {
  page: `select ${summary('posts')}, (select count(*) from posts) as total from posts order by created_at desc, id desc limit +? offset +?`,
  detail: (where) => `select ${summary('p')}, p.meta, p.body, p.body_html,
    (select json_group_array(json_object('locale', a.locale, 'id', a.id, 'slug', a.slug)) from
      (select locale, id, slug from posts a where a.translation_group = p.translation_group and a.id <> p.id order by locale) a) as alternates
    from posts p where ${where}`,
  // Ranked by bm25 with the title weighted (the table's rank function, set in SCHEMA): FTS5 sorts
  // by rank itself, so highlights and snippets are made for the page's rows only; the total is
  // counted in the same statement.
  search: `select ${summary('posts')}, f.title_hl, f.body_hl, (select count(*) from posts_fts where posts_fts match @match) as total
    from (select rowid, highlight(posts_fts, 0, char(64976), char(64977)) as title_hl,
        snippet(posts_fts, 1, char(64976), char(64977), '…', 24) as body_hl
      from posts_fts where posts_fts match @match order by rank limit +@limit offset +@offset) as f
    join posts on posts.id = f.rowid`,
  insert: `insert into posts (slug, locale, title, excerpt, status, translation_group, created_at, updated_at, body, body_html)
    values (?, 'en', ?, null, 'draft', lower(hex(randomblob(16))), ?, ?, ?, ?) returning id`,
  insertFts: 'insert into posts_fts (rowid, title, body_text) values (?, ?, ?)',
};

// Search text -> FTS5 query (words quoted, the last a prefix), as any search box needs.
function ftsQuery(q) {
  const words = (q.normalize('NFC').match(/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu) ?? []).slice(0, 16);
  return words.map((w, i) => `"${w}"${i === words.length - 1 ? '*' : ''}`).join(' ');
}

const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
const marked = (s) =>
  escapeHtml(s ?? '')
    .replaceAll('\uFDD0', '<mark>')
    .replaceAll('\uFDD1', '</mark>');

export function createLeanApp(cairnFile, file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  copyFrom(db, cairnFile);
  const stmt = {
    page: db.prepare(SQL.page),
    byId: db.prepare(SQL.detail('p.id = +?')),
    bySlug: db.prepare(SQL.detail("p.locale = 'en' and p.slug = +?")),
    search: db.prepare(SQL.search),
    insert: db.prepare(SQL.insert),
    insertFts: db.prepare(SQL.insertFts),
    slugTaken: db.prepare("select 1 from posts where locale = 'en' and slug = ?").pluck(),
    // The total of a page past the end (a page's rows carry it otherwise).
    count: db.prepare('select count(*) from posts').pluck(),
  };
  const md = new MarkdownIt('default', { html: false });
  const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024 });
  const json = (reply, body) => reply.type('application/json; charset=utf-8').send(body);

  app.get('/lean/ready', async () => ({ ok: true }));

  app.get('/lean/contents', (req, reply) => {
    const { page, limit, offset } = pageOf(req.query);
    const rows = stmt.page.all(limit, offset);
    const total = rows[0]?.total ?? stmt.count.get();
    return json(reply, `{"data":[${rows.map((r) => summaryJson(r)).join(',')}],"meta":${JSON.stringify(pageMeta(total, page, limit))}}`);
  });

  app.get('/lean/contents/search', (req, reply) => {
    const { page, limit, offset } = pageOf(req.query);
    const match = ftsQuery(String(req.query.q ?? ''));
    const rows = match ? stmt.search.all({ match, limit, offset }) : [];
    const total = rows[0]?.total ?? 0;
    const items = rows.map((r) => summaryJson(r, `,"highlights":{"title":${JSON.stringify(marked(r.title_hl))},"body":${JSON.stringify(marked(r.body_hl))}}`));
    return json(reply, `{"data":[${items.join(',')}],"meta":${JSON.stringify(pageMeta(total, page, limit))}}`);
  });

  app.get('/lean/contents/slug/:slug', (req, reply) => {
    const row = stmt.bySlug.get(req.params.slug);
    if (!row) return reply.code(404).send({ error: 'not found' });
    return json(reply, `{"data":${detailJson(row)}}`);
  });

  app.get('/lean/contents/:id', (req, reply) => {
    const row = stmt.byId.get(Number(req.params.id));
    if (!row) return reply.code(404).send({ error: 'not found' });
    return json(reply, detailJson(row));
  });

  // A create from markdown: the HTML rendered once, the text for search taken from it.
  const create = db.transaction((title, markdown, html, text, at) => {
    const base =
      title
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '') || 'post';
    let slug = base;
    for (let n = 2; stmt.slugTaken.get(slug); n++) slug = `${base}-${n}`;
    const id = stmt.insert.get(slug, title, at, at, JSON.stringify(markdown), html).id;
    stmt.insertFts.run(id, title, text);
    return stmt.byId.get(id);
  });
  app.post('/lean/contents', (req, reply) => {
    const { title, bodyMarkdown } = req.body ?? {};
    if (typeof title !== 'string' || !title.trim() || typeof bodyMarkdown !== 'string') return reply.code(422).send({ error: 'title and bodyMarkdown' });
    const html = md.render(bodyMarkdown);
    const text = html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ');
    const at = new Date().toISOString();
    return json(reply.code(201), `{"data":${detailJson(create(title.trim(), bodyMarkdown, html, text, at))}}`);
  });

  app.addHook('onClose', async () => db.close());
  return app;
}

const port = Number(process.env.PORT);
const cairnFile = process.env.DATABASE_URL;
if (!Number.isInteger(port) || port <= 0 || !cairnFile) {
  process.stderr.write('lean-server: PORT and DATABASE_URL must be set\n');
  process.exit(1);
}
const app = createLeanApp(cairnFile, path.join(process.env.CAIRN_DATA_DIR ?? '.', 'lean.db'));
await app.listen({ port, host: process.env.HOST || '127.0.0.1' });
const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
