// The per-endpoint reference of `npm run bench`: a plain Fastify app on the same seeded SQLite
// file, answering the read endpoints of categories, tags and contents with the same SQL and the
// same JSON as the service, and nothing else: no auth (so no token lookup), no rate limit, no
// validation or response schemas, no query builder. The service's req/s divided by this one's
// is the "vs bare Fastify+SQLite" ratio: what the service's own machinery costs on top of the
// database work an endpoint cannot avoid.
//
// The SQL strings are the ones Kysely compiles for the service (from its query log); when the
// service's queries change, change them here too. Before loading each endpoint the bench checks
// that both servers answer the same JSON and run the same statements (bench/parity.ts), and
// warns when they do not.
//
// One site: the seeded one, read at start (the service resolves it from the token on every
// request). Same connection settings as src/db/connect.ts; nothing here writes.
//
// Run as a script (`node bench/bare-fastify.mjs` with PORT and DATABASE_URL) it listens; the
// parity check imports createBareApp instead.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
// The text the service's SQLite connection prepares for the same SQL (decisions PF12).
import { planOnceSql } from '../dist/db/sqlite.js';

// ------------------------------------------------------------------------------------------------
// Statements

const list = (n) => Array.from({ length: n }, () => '?').join(', ');

const SCALARS =
  '"contents"."id", "contents"."title", "contents"."slug", "contents"."type", "contents"."status", "contents"."excerpt", "contents"."locale", ' +
  '"contents"."translation_group", "contents"."author_id", "contents"."featured_image_url", "contents"."featured_image_alt", ' +
  '"contents"."published_at", "contents"."scheduled_at", "contents"."created_at", "contents"."updated_at"';
// The kept category and tag lists (migration 0048), selected as their JSON text (decisions PF13).
const LINK_LISTS = '"contents"."categories_list" as "categories_list", "contents"."tags_list" as "tags_list"';
const SUMMARY = `${SCALARS}, ${LINK_LISTS}`;
// The author's name joined on the row (decisions N14), after the selected columns.
const AUTHOR = ', "author"."full_name" as "author_name"';
const AUTHOR_JOIN = ' left join "users" as "author" on "author"."id" = "contents"."author_id" and "author"."site_id" = "contents"."site_id"';
const DETAIL =
  `${SCALARS}, "contents"."site_id", "contents"."meta_title", ` +
  '"contents"."meta_description", "contents"."meta_keywords", "contents"."canonical_url", "contents"."og_image", "contents"."metadata", ' +
  `"contents"."custom_data", "contents"."structured_data", "cb"."body_html", ${LINK_LISTS}, "cb"."body" as "body"`;
// The body beside the row (migration 0025), before the author.
const BODY_JOIN = ' left join "content_bodies" as "cb" on "cb"."content_id" = "contents"."id" and "cb"."site_id" = "contents"."site_id"';

// The alternates in the same statement; the categories and tags are on the row (migration 0048).
const LISTS = `, (select coalesce(json_group_array(json_object('id', "agg"."id", 'locale', "agg"."locale", 'slug', "agg"."slug")), '[]') from (select "m"."id", "m"."locale", "m"."slug" from "contents" as "m" where "m"."site_id" = "contents"."site_id" and "m"."translation_group" = "contents"."translation_group" and "m"."id" != "contents"."id") as agg) as "alternates_list"`;

const SQL = {
  // One indexed lookup of an exact redirect by the hash of its path (redirects_site_source_uq).
  redirectByHash: 'select "id", "target_url", "status_code" from "redirects" where "site_id" = ? and "source_hash" = ? and "is_active" = 1',
  treeRows: 'select "id", "name", "slug", "parent_id", "locale" from "categories" where "site_id" = ? order by "name" asc, "id" asc',
  categoryCounts: (n) =>
    `select "category_id" as ref, count(*) as n from "content_categories" where site_id = ? and "category_id" in (${list(n)}) group by "category_id"`,
  tagCount: 'select count(*) as "count" from "tags" where "site_id" = ?',
  tagPage: 'select * from "tags" where "site_id" = ? order by "created_at" desc, "id" desc limit ? offset ?',
  tagCounts: (n) => `select "tag_id" as ref, count(*) as n from "content_tags" where site_id = ? and "tag_id" in (${list(n)}) group by "tag_id"`,
  // The unfiltered total from the per-status counters (migration 0012), as the service reads it.
  contentCount: 'select coalesce(sum("n"), 0) as "count" from "content_counts" where "site_id" = ?',
  // The page's ids from the index first, then those rows with their author (deferred join), each
  // row carrying the total from the counters (a page past the end counts on its own).
  contentPage:
    `select ${SUMMARY}${AUTHOR}, (select coalesce(sum("n"), 0) as "count" from "content_counts" where "site_id" = ?) as "total" from "contents"${AUTHOR_JOIN} where "contents"."site_id" || '' = ? and "contents"."id" in ` +
    '(select "contents"."id" from "contents" where "contents"."site_id" = ? order by "contents"."created_at" desc, "contents"."id" desc limit ? offset ?) ' +
    'order by "contents"."created_at" desc, "contents"."id" desc',
  summariesByIds: (n) => `select ${SUMMARY}${AUTHOR} from "contents"${AUTHOR_JOIN} where "contents"."site_id" || '' = ? and "contents"."id" in (${list(n)})`,
  byId: `select ${DETAIL}${AUTHOR}${LISTS} from "contents"${BODY_JOIN}${AUTHOR_JOIN} where "contents"."site_id" = ? and "contents"."id" = ?`,
  bySlug: `select ${DETAIL}${AUTHOR}${LISTS} from "contents"${BODY_JOIN}${AUTHOR_JOIN} where "contents"."site_id" = ? and "contents"."slug" = ? and "contents"."locale" = ?`,
  // Without ?locale=, the site's default locale in the same statement.
  bySlugDefault:
    `select ${DETAIL}${AUTHOR}${LISTS} from "contents"${BODY_JOIN}${AUTHOR_JOIN} where "contents"."site_id" = ? and "contents"."slug" = ? ` +
    'and "contents"."locale" = (select "sites"."default_locale" from "sites" where "sites"."id" = ?)',
  // Search (src/modules/contents/contents.search.ts): the filtered matches counted in all, in the
  // title, in title or slug; then only the tiers the page falls in are ranked, each in two steps
  // (scores, then dates for the rows down to the page's last score).
  searchCount:
    'select count(*) as "n" from (select rowid as fts_id from contents_fts where contents_fts match ? limit -1) as "fts" ' +
    'cross join "contents" where contents.id = fts.fts_id and "contents"."site_id" = ?',
  tierPage: (within) =>
    'with "ranked" as materialized (select "contents"."id" as "id", -fts.fts_score as "score" from ' +
    '(select rowid as fts_id, bm25(contents_fts, 10.0, 5.0, 1.0) as fts_score from contents_fts where contents_fts match ? and ' +
    within.map((w) => `+rowid ${w} (select rowid from contents_fts where contents_fts match ?)`).join(' and ') +
    ' limit -1) as "fts" cross join "contents" where contents.id = fts.fts_id and "contents"."site_id" = ?), ' +
    '"boundary" as materialized (select "score" from "ranked" order by "score" desc limit ? offset ?) ' +
    'select "r"."id", "r"."score", coalesce(c.published_at, c.created_at) as "sort_at" from "ranked" as "r" inner join "contents" as "c" on "c"."id" = "r"."id" ' +
    'where not exists (select 1 from boundary) or r.score >= (select score from boundary) order by "r"."score" desc, "sort_at" desc, "r"."id" desc limit ? offset ?',
  // A page block by its path in the site's default locale, then each contents dataSource field's
  // page of published summaries (no count: nothing shows a total), as the site-blocks service runs them.
  siteLocales: 'select "default_locale", "enabled_locales" from "sites" where "id" = ?',
  blockByPath: 'select * from "site_blocks" where "site_id" = ? and "locale" = ? and "path" = ?',
  publishedPage: (filter) =>
    `select ${SUMMARY}${AUTHOR} from "contents"${AUTHOR_JOIN} where "contents"."site_id" || '' = ? and "contents"."id" in ` +
    `(select "contents"."id" from "contents" where "contents"."site_id" = ? and "contents"."status" = ?${filter} ` +
    'order by "contents"."created_at" desc, "contents"."id" desc limit ? offset ?) order by "contents"."created_at" desc, "contents"."id" desc',
  inCategories: (n) =>
    ` and exists (select "cc"."content_id" from "content_categories" as "cc" where "cc"."content_id" = "contents"."id" and "cc"."category_id" in (${list(n)}))`,
  inTags: (n) =>
    ` and exists (select "ct"."content_id" from "content_tags" as "ct" where "ct"."content_id" = "contents"."id" and "ct"."tag_id" in (${list(n)}))`,
  highlights: `
    select rowid as id,
      highlight(contents_fts, 0, ?, ?) as title_hl,
      snippet(contents_fts, 2, ?, ?, ?, ?) as body_hl
    from contents_fts
    where contents_fts match ? and +rowid in (select value from json_each(?))`,
};

// ------------------------------------------------------------------------------------------------
// Shapes (as the service builds them)

function pageOf(query) {
  const page = Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1);
  const limit = Math.min(100, Math.max(1, Number.parseInt(query.limit ?? '15', 10) || 15));
  return { page, limit, offset: (page - 1) * limit };
}

const pageMeta = (total, page, limit) => ({ total, perPage: limit, currentPage: page, lastPage: Math.max(1, Math.ceil(total / limit)) });

function parseJson(value, fallback) {
  if (value === null || value === undefined) return fallback;
  try {
    return JSON.parse(value);
  } catch {
    return fallback;
  }
}

// Search text -> FTS5 query, and highlights -> HTML, as src/modules/contents/contents.search.ts.
const OPEN = '\uFDD0';
const CLOSE = '\uFDD1';

function ftsQuery(q) {
  const words = q.normalize('NFC').match(/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu) ?? [];
  const byKey = new Map();
  words.forEach((word, i) => {
    const chars = Array.from(word);
    const cut = chars.length > 100;
    const text = cut ? chars.slice(0, 100).join('') : word;
    const prefix = cut || i === words.length - 1;
    const seen = byKey.get(text.toLowerCase());
    if (seen) seen.prefix &&= prefix;
    else byKey.set(text.toLowerCase(), { text, prefix });
  });
  return [...byKey.values()]
    .slice(0, 16)
    .map((t) => `"${t.text.replace(/"/g, '""')}"${t.prefix ? '*' : ''}`)
    .join(' ');
}

const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));

function markedToHtml(text) {
  let out = '';
  let open = false;
  let piece = '';
  const flush = () => {
    out += escapeHtml(piece);
    piece = '';
  };
  for (const ch of text.replace(/\s+/g, ' ').trim()) {
    if (ch === OPEN) {
      if (!open) {
        flush();
        out += '<mark>';
        open = true;
      }
    } else if (ch === CLOSE) {
      if (open) {
        flush();
        out += '</mark>';
        open = false;
      }
    } else piece += ch;
  }
  flush();
  if (open) out += '</mark>';
  return out.replace(/<mark><\/mark>/g, '');
}

// ------------------------------------------------------------------------------------------------
// The app

/** The Fastify app on the SQLite file `file` (not listening), with the bench's data directory; `close()` closes both. */
export function createBareApp(file, dataDir = process.env.CAIRN_DATA_DIR ?? path.dirname(path.resolve(file))) {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('optimize=0x10002');

  const site = db.prepare('select id from sites order by created_at limit 1').get();
  if (!site) throw new Error('bare-fastify: the database has no site');
  const siteId = site.id;

  // Prepared once per SQL text, like the service's statement cache (src/db/sqlite.ts); the
  // `in (...)` lists make one text per list length.
  const cache = new Map();
  const stmt = (sql) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(planOnceSql(sql))));
    return s;
  };

  function summaries(rows) {
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      slug: r.slug,
      type: 'post',
      status: r.status,
      excerpt: r.excerpt,
      locale: r.locale,
      translationGroup: r.translation_group,
      featuredImage: r.featured_image_url ? { url: r.featured_image_url, alt: r.featured_image_alt, variants: null } : null,
      categories: JSON.parse(r.categories_list),
      tags: JSON.parse(r.tags_list),
      author: r.author_id && r.author_name !== null ? { id: r.author_id, fullName: r.author_name } : null,
      publishedAt: r.published_at,
      scheduledAt: r.scheduled_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  // The detail row carries its alternates (LISTS), sorted by locale in JS, as the service does.
  function detail(r) {
    const [summary] = summaries([r]);
    const members = JSON.parse(r.alternates_list).sort((a, b) => (a.locale < b.locale ? -1 : a.locale > b.locale ? 1 : 0));
    const sd = parseJson(r.structured_data, null) ?? {};
    const structuredData = { faq: sd.faq ?? [], article: { enabled: sd.article?.enabled ?? false, type: sd.article?.type ?? 'Article' } };
    const jsonLd = [];
    if (structuredData.article.enabled) {
      jsonLd.push({
        '@context': 'https://schema.org',
        '@type': structuredData.article.type,
        headline: r.meta_title ?? r.title,
        ...(r.excerpt || r.meta_description ? { description: r.meta_description ?? r.excerpt } : {}),
        ...(r.featured_image_url ? { image: r.featured_image_url } : {}),
        ...(r.published_at ? { datePublished: r.published_at } : {}),
        dateModified: r.updated_at,
        ...(summary.author ? { author: { '@type': 'Person', name: summary.author.fullName } } : {}),
        inLanguage: r.locale,
      });
    }
    if (structuredData.faq.length) {
      jsonLd.push({
        '@context': 'https://schema.org',
        '@type': 'FAQPage',
        mainEntity: structuredData.faq.map((f) => ({ '@type': 'Question', name: f.question, acceptedAnswer: { '@type': 'Answer', text: f.answer } })),
      });
    }
    return {
      ...summary,
      body: parseJson(r.body, null),
      bodyHtml: r.body_html,
      meta: { metaTitle: r.meta_title, metaDescription: r.meta_description, metaKeywords: r.meta_keywords, canonicalUrl: r.canonical_url, ogImage: r.og_image },
      alternates: members.map((m) => ({ locale: m.locale, id: m.id, slug: m.slug })),
      metadata: parseJson(r.metadata, {}) ?? {},
      customData: parseJson(r.custom_data, null),
      structuredData,
      jsonLd,
    };
  }

  const app = Fastify({ logger: false });

  app.get('/bare/ready', async () => ({ ok: true }));

  // The reference for media delivery: @fastify/static sending the stored variant from the same
  // directory (ETag, Range, 304 as it does them), without a database lookup.
  app.register(fastifyStatic, { root: path.resolve(dataDir, 'files'), serve: false });
  app.get('/files/:siteId/:id/:filename', (req, reply) => {
    const w = req.query.w;
    return reply.type('image/jpeg').sendFile(`media/${req.params.siteId}/${req.params.id}/${w ? `w${w}` : 'original'}`);
  });

  // The reference for the cached SEO outputs: the same bytes, built by the seeder
  // (bench/seed-seo.ts) and read from a file once, sent as they are.
  const outputs = path.join(dataDir, 'bench-outputs');
  for (const [name, type] of [
    ['sitemap.xml', 'application/xml; charset=utf-8'],
    ['llms.txt', 'text/plain; charset=utf-8'],
  ]) {
    const file = path.join(outputs, name);
    const bytes = existsSync(file) ? readFileSync(file) : null;
    if (bytes) app.get(`/v1/public/${name}`, async (_req, reply) => reply.header('content-type', type).send(bytes));
  }

  // The reference for a redirect resolve: one indexed lookup of the path, nothing compiled or
  // cached, no hit counted (decisions R5).
  app.get('/v1/redirects/resolve', async (req, reply) => {
    const path = String(req.query.path ?? '').split('?')[0];
    const row = stmt(SQL.redirectByHash).get(siteId, createHash('sha256').update(`path:${path}`).digest('hex'));
    if (!row) return reply.code(404).send({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'The redirect for this path was not found.' });
    return { data: { redirectId: row.id, targetUrl: row.target_url, statusCode: row.status_code } };
  });

  app.get('/v1/categories/tree', async () => {
    const rows = stmt(SQL.treeRows).all(siteId);
    const counts = new Map(rows.map((r) => [r.id, 0]));
    if (rows.length) for (const c of stmt(SQL.categoryCounts(rows.length)).all(siteId, ...rows.map((r) => r.id))) counts.set(c.ref, c.n);
    const nodes = new Map(rows.map((r) => [r.id, { id: r.id, name: r.name, slug: r.slug, contentCount: counts.get(r.id) ?? 0, children: [] }]));
    const roots = [];
    for (const r of rows) {
      const parent = r.parent_id === null ? undefined : nodes.get(r.parent_id);
      (parent ? parent.children : roots).push(nodes.get(r.id));
    }
    return { data: roots };
  });

  app.get('/v1/tags', async (req) => {
    const { page, limit, offset } = pageOf(req.query);
    const total = stmt(SQL.tagCount).get(siteId).count;
    const rows = total === 0 || offset >= total ? [] : stmt(SQL.tagPage).all(siteId, limit, offset);
    const counts = new Map();
    if (rows.length) for (const c of stmt(SQL.tagCounts(rows.length)).all(siteId, ...rows.map((r) => r.id))) counts.set(c.ref, c.n);
    return {
      data: rows.map((r) => ({
        id: r.id,
        name: r.name,
        slug: r.slug,
        description: r.description,
        locale: r.locale,
        translationGroup: r.translation_group,
        contentCount: counts.get(r.id) ?? 0,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      })),
      meta: pageMeta(total, page, limit),
    };
  });

  app.get('/v1/contents', async (req) => {
    const { page, limit, offset } = pageOf(req.query);
    const rows = stmt(SQL.contentPage).all(siteId, siteId, siteId, limit, offset);
    const total = rows.length ? rows[0].total : stmt(SQL.contentCount).get(siteId).count;
    return { data: summaries(rows), meta: pageMeta(total, page, limit) };
  });

  app.get('/v1/contents/search', async (req) => {
    const { page, limit, offset } = pageOf(req.query);
    const match = ftsQuery(String(req.query.q ?? ''));
    if (!match) return { data: [], meta: pageMeta(0, page, limit) };
    const inTitle = `{title} : (${match})`;
    const inHead = `{title slug} : (${match})`;
    const count = (m) => stmt(SQL.searchCount).get(m, siteId).n;
    const total = count(match);
    if (total === 0 || offset >= total) return { data: [], meta: pageMeta(total, page, limit) };
    const end = Math.min(offset + limit, total);
    const titleCount = count(inTitle);
    const headCount = end <= titleCount ? titleCount : count(inHead);
    const tiers = [
      { from: 0, to: titleCount, within: ['in'], params: [inTitle] },
      { from: titleCount, to: headCount, within: ['in', 'not in'], params: [inHead, inTitle] },
      { from: headCount, to: total, within: ['not in'], params: [inHead] },
    ];
    const ids = [];
    for (const t of tiers) {
      const from = Math.max(offset, t.from);
      const to = Math.min(end, t.to);
      if (from >= to) continue;
      for (const r of stmt(SQL.tierPage(t.within)).all(match, ...t.params, siteId, 1, to - t.from - 1, to - from, from - t.from)) ids.push(r.id);
    }
    const marks = new Map(
      stmt(SQL.highlights)
        .all(OPEN, CLOSE, OPEN, CLOSE, '…', 24, match, JSON.stringify(ids))
        .map((m) => [m.id, m]),
    );
    const byId = new Map(summaries(stmt(SQL.summariesByIds(ids.length)).all(siteId, ...ids)).map((s) => [s.id, s]));
    return {
      data: ids
        .filter((id) => byId.has(id))
        .map((id) => ({
          ...byId.get(id),
          highlights: { title: markedToHtml(marks.get(id)?.title_hl ?? ''), body: markedToHtml(marks.get(id)?.body_hl ?? '') },
        })),
      meta: pageMeta(total, page, limit),
    };
  });

  app.get('/v1/contents/slug/:slug', async (req, reply) => {
    const row = req.query.locale
      ? stmt(SQL.bySlug).get(siteId, req.params.slug, req.query.locale)
      : stmt(SQL.bySlugDefault).get(siteId, req.params.slug, siteId);
    if (!row) return reply.code(404).send({ error: 'not found' });
    return { data: detail(row) };
  });

  app.get('/v1/contents/:id', async (req, reply) => {
    const row = stmt(SQL.byId).get(siteId, Number(req.params.id));
    if (!row) return reply.code(404).send({ error: 'not found' });
    return detail(row);
  });

  // The reference for a published page block read by a delivery token: the block by its path, and
  // for each dataSource field of its schema (contents, filtered by category or tag) one page of
  // published summaries with their relations.
  app.get('/v1/site-blocks/by-path', async (req, reply) => {
    const { default_locale: locale } = stmt(SQL.siteLocales).get(siteId);
    const row = stmt(SQL.blockByPath).get(siteId, locale, String(req.query.path));
    if (row?.status !== 'published') return reply.code(404).send({ error: 'not found' });
    const schema = JSON.parse(row.schema);
    const data = JSON.parse(row.data);
    for (const field of schema) {
      if (field.type !== 'dataSource' || field.source !== 'contents') continue;
      const categoryIds = field.filters?.categoryIds ?? [];
      const tagIds = field.filters?.tagIds ?? [];
      const filter = (categoryIds.length ? SQL.inCategories(categoryIds.length) : '') + (tagIds.length ? SQL.inTags(tagIds.length) : '');
      data[field.name] = summaries(stmt(SQL.publishedPage(filter)).all(siteId, siteId, 'published', ...categoryIds, ...tagIds, field.limit ?? 10, 0));
    }
    return {
      data: {
        id: row.id,
        name: row.name,
        slug: row.slug,
        type: row.type,
        status: row.status,
        path: row.path,
        locale: row.locale,
        translationGroup: row.translation_group,
        schema,
        data,
        hasUnpublishedChanges: false,
        publishedAt: row.published_at,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      },
    };
  });

  // The reference for a public form submission: the site by its key, the active form by slug in
  // the site's default locale, the values checked against the fields (required, e-mail, option,
  // length), then in one transaction the submission, its count, the webhook event and the e-mail
  // job, as the service writes them.
  const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
  const insertSubmission = db.prepare(
    'insert into "form_submissions" ("site_id", "form_id", "status", "data", "search_text", "ip_address", "user_agent", "created_at") values (?, ?, ?, ?, ?, ?, ?, ?) returning "id"',
  );
  const countSubmission = db.prepare('update "forms" set "submission_count" = submission_count + 1 where "site_id" = ? and "id" = ?');
  const insertEvent = db.prepare('insert into "outbox_events" ("site_id", "type", "payload", "created_at", "dispatched_at") values (?, ?, ?, ?, null)');
  const insertJob = db.prepare(
    'insert into "jobs" ("site_id", "type", "key", "payload", "run_at", "attempts", "locked_until", "last_error", "failed_at", "created_at") values (?, ?, null, ?, ?, 0, null, null, null, ?)',
  );
  const storeSubmission = db.transaction((form, data, ip, ua) => {
    const at = new Date().toISOString();
    const text = Object.values(data).join(' ').toLowerCase();
    const { id } = insertSubmission.get(form.site_id, form.id, 'new', JSON.stringify(data), text, ip, ua, at);
    countSubmission.run(form.site_id, form.id);
    const event = { formId: form.id, formSlug: form.slug, locale: form.locale, submissionId: id, data, createdAt: at };
    insertEvent.run(form.site_id, 'form.submitted', JSON.stringify(event), at);
    insertJob.run(form.site_id, 'notify.email', JSON.stringify({ event: 'form.submitted', data: event }), at, at);
  });
  app.post('/v1/public/forms/:slug/submissions', async (req, reply) => {
    const site = stmt('select "id", "default_locale" from "sites" where "public_key" = ?').get(String(req.headers['x-site-key']));
    if (!site) return reply.code(401).send({ error: 'site key' });
    const form = stmt('select * from "forms" where "site_id" = ? and "locale" = ? and "slug" = ?').get(site.id, site.default_locale, req.params.slug);
    if (form?.status !== 'active') return reply.code(404).send({ error: 'not found' });
    const body = req.body ?? {};
    if (body._gotcha) return reply.code(201).send({ data: { message: 'Thank you.' } });
    const data = {};
    const errors = {};
    for (const f of JSON.parse(form.schema)) {
      const v = body[f.name];
      if (v === undefined || v === '') {
        if (f.required) errors[`data.${f.name}`] = ['is required'];
        continue;
      }
      if (typeof v !== 'string' || v.length > (f.validation?.maxLength ?? 1000)) errors[`data.${f.name}`] = ['is invalid'];
      else if (f.type === 'email' && !EMAIL.test(v)) errors[`data.${f.name}`] = ['must be an e-mail address'];
      else if (f.options && !f.options.some((o) => o.value === v)) errors[`data.${f.name}`] = ['must be one of the options'];
      else data[f.name] = v;
    }
    if (Object.keys(errors).length) return reply.code(422).send({ errors });
    storeSubmission(form, data, req.ip, req.headers['user-agent'] ?? null);
    return reply.code(201).send({ data: { message: form.success_message ?? 'Thank you.' } });
  });

  app.addHook('onClose', async () => db.close());
  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT);
  const file = process.env.DATABASE_URL;
  if (!Number.isInteger(port) || port <= 0 || !file) {
    process.stderr.write('bare-fastify: PORT and DATABASE_URL must be set\n');
    process.exit(1);
  }
  const app = createBareApp(file);
  await app.listen({ port, host: process.env.HOST || '127.0.0.1' });
  const stop = () => app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
