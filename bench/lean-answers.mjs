// The answers of the lean reference servers (bench/lean-server.mjs on SQLite, bench/lean-server-pg.mjs
// on PostgreSQL): the same JSON as Cairn's contents endpoints, built by hand from rows whose JSON
// columns (categories, tags, meta, body, alternates) are spliced in as they are stored.

export const SUMMARY_COLUMNS = [
  'id',
  'title',
  'slug',
  'status',
  'excerpt',
  'locale',
  'translation_group',
  'author_id',
  'author_name',
  'featured_image_url',
  'featured_image_alt',
  'categories',
  'tags',
  'published_at',
  'scheduled_at',
  'created_at',
  'updated_at',
];
export const summary = (table) => SUMMARY_COLUMNS.map((c) => `${table}.${c}`).join(', ');

export const pageMeta = (total, page, limit) => ({ total, perPage: limit, currentPage: page, lastPage: Math.max(1, Math.ceil(total / limit)) });

export function pageOf(query) {
  const page = Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1);
  const limit = Math.min(100, Math.max(1, Number.parseInt(query.limit ?? '15', 10) || 15));
  return { page, limit, offset: (page - 1) * limit };
}

// JSON columns are spliced into the answer as they are stored, never parsed and re-serialised.
const raw = (json) => json ?? 'null';

export function summaryJson(r, extra = '') {
  const image = r.featured_image_url ? JSON.stringify({ url: r.featured_image_url, alt: r.featured_image_alt, variants: null }) : 'null';
  const author = r.author_id && r.author_name !== null ? JSON.stringify({ id: r.author_id, fullName: r.author_name }) : 'null';
  return `{"id":${r.id},"title":${JSON.stringify(r.title)},"slug":${JSON.stringify(r.slug)},"type":"post","status":"${r.status}","excerpt":${JSON.stringify(r.excerpt)},"locale":"${r.locale}","translationGroup":"${r.translation_group}","featuredImage":${image},"categories":${r.categories},"tags":${r.tags},"author":${author},"publishedAt":${JSON.stringify(r.published_at)},"scheduledAt":${JSON.stringify(r.scheduled_at)},"createdAt":"${r.created_at}","updatedAt":"${r.updated_at}"${extra}}`;
}

export function detailJson(r) {
  return summaryJson(
    r,
    `,"body":${raw(r.body)},"bodyHtml":${JSON.stringify(r.body_html)},"meta":${r.meta},"alternates":${r.alternates},"metadata":{},"customData":null,"structuredData":{"faq":[],"article":{"enabled":false,"type":"Article"}},"jsonLd":[]`,
  );
}

/** The columns of the lean servers' posts table after its id (the same DDL on SQLite and PostgreSQL): its dates are the ISO text of the answers. */
export const POST_COLUMNS = `
  slug text not null,
  locale text not null,
  title text not null,
  excerpt text,
  status text not null,
  translation_group text not null,
  author_id text,
  author_name text,
  featured_image_url text,
  featured_image_alt text,
  published_at text,
  scheduled_at text,
  created_at text not null,
  updated_at text not null,
  categories text not null default '[]',
  tags text not null default '[]',
  meta text not null default '{}',
  body text,
  body_html text not null default ''`;
