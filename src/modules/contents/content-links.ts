import { type ExpressionBuilder, sql } from 'kysely';
import type { AuthContext } from '../../plugins/auth.js';
import type { DB, Executor } from '../../db/types.js';
import { paginate } from '../../shared/pagination.js';
import { applyVisibility, type Visibility } from './contents.repository.js';

/**
 * The one-way read API of contents for the groups contents link to (categories, tags): counts
 * and pages of linked contents. Those groups import this file, never the contents service, so
 * the module graph stays acyclic (contents -> categories/tags -> content-links).
 */

/** What this token may see of contents (decisions G12, G13): its own only with a `.own` scope, published only with a delivery token. */
export function visibilityOf(auth: Pick<AuthContext, 'userId' | 'access' | 'kind'>): Visibility {
  return { all: false, ownerId: auth.access === 'own' ? auth.userId : undefined, publishedOnly: auth.kind === 'delivery' };
}

async function countByRef(db: Executor, table: 'content_categories' | 'content_tags', siteId: string, ids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>(ids.map((id) => [id, 0]));
  if (!ids.length) return out;
  const col = table === 'content_categories' ? 'category_id' : 'tag_id';
  const { rows } = await sql<{ ref: number; n: number }>`
    select ${sql.ref(col)} as ref, count(*) as n from ${sql.table(table)}
    where site_id = ${siteId} and ${sql.ref(col)} in (${sql.join(ids)}) group by ${sql.ref(col)}`.execute(db);
  for (const r of rows) out.set(Number(r.ref), Number(r.n));
  return out;
}

/** Linked contents per category id (one grouped count for the page of categories). */
export function contentCountsByCategory(db: Executor, siteId: string, ids: number[]) {
  return countByRef(db, 'content_categories', siteId, ids);
}

/** Linked contents per tag id. */
export function contentCountsByTag(db: Executor, siteId: string, ids: number[]) {
  return countByRef(db, 'content_tags', siteId, ids);
}

/** The `computed` of a group contents link to (categories, tags): each row's contentCount, one grouped count for the page. */
export function linkedContentCounts(table: 'content_categories' | 'content_tags') {
  return async (db: Executor, siteId: string, rows: Array<Record<string, unknown>>) => {
    const counts = await countByRef(
      db,
      table,
      siteId,
      rows.map((r) => Number(r.id)),
    );
    return rows.map((r) => ({ contentCount: counts.get(Number(r.id)) ?? 0 }));
  };
}

/** A page of a category's contents the token may see, newest first. */
export function contentsOfCategory(db: Executor, siteId: string, categoryId: number, page: { page: number; limit: number }, visibility: Visibility) {
  const base = applyVisibility(
    db
      .selectFrom('contents')
      .innerJoin('content_categories as cc', 'cc.content_id', 'contents.id')
      .select(['contents.id', 'contents.title', 'contents.slug', 'contents.status'])
      .where('cc.site_id', '=', siteId)
      .where('cc.category_id', '=', categoryId),
    visibility,
  );
  return paginate(base, page, (qb) => qb.orderBy('contents.created_at', 'desc').orderBy('contents.id', 'desc'));
}

// ---- public outputs (sitemaps, llms.txt, IndexNow): published contents only ----

/** What the site's public outputs may show of contents (decisions G13, G20): published ones. */
export const PUBLISHED_ONLY: Visibility = Object.freeze({ all: false, ownerId: undefined, publishedOnly: true });

/** Contents of a site as public outputs see them, joined with nothing. */
const published = (db: Executor, siteId: string) => applyVisibility(db.selectFrom('contents').where('contents.site_id', '=', siteId), PUBLISHED_ONLY);

/** A content's body (content_bodies, migration 0025), as a column of the read. */
const bodyOf = (siteId: string) => (eb: ExpressionBuilder<DB, 'contents'>) =>
  eb
    .selectFrom('content_bodies')
    .select('content_bodies.body')
    .whereRef('content_bodies.content_id', '=', 'contents.id')
    .where('content_bodies.site_id', '=', siteId)
    .as('body');

/** A content's first category (by position): the one its nested URL and its llms.txt section follow. */
const firstCategoryId = (eb: ExpressionBuilder<DB, 'contents'>, siteId: string) =>
  eb
    .selectFrom('content_categories')
    .select('content_categories.category_id')
    .whereRef('content_categories.content_id', '=', 'contents.id')
    .where('content_categories.site_id', '=', siteId)
    .orderBy('content_categories.position')
    .limit(1)
    .as('first_category_id');

/** Published contents by id, `limit` after `afterId`, with what their URLs need (sitemaps). */
export function publishedAddresses(db: Executor, siteId: string, afterId: number, limit: number) {
  return published(db, siteId)
    .select((eb) => [
      'contents.id',
      'contents.slug',
      'contents.locale',
      'contents.type',
      'contents.translation_group',
      'contents.updated_at',
      firstCategoryId(eb, siteId),
    ])
    .where('contents.id', '>', afterId)
    .orderBy('contents.id')
    .limit(limit)
    .execute();
}

/** A page of published contents, newest publication first, with title and descriptions (llms.txt). */
export function publishedNewestFirst(db: Executor, siteId: string, limit: number, offset: number) {
  return published(db, siteId)
    .select((eb) => [
      'contents.id',
      'contents.title',
      'contents.slug',
      'contents.locale',
      'contents.type',
      'contents.excerpt',
      'contents.meta_description',
      'contents.published_at',
      firstCategoryId(eb, siteId),
    ])
    .orderBy('contents.published_at', 'desc')
    .orderBy('contents.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Published contents with their bodies, by id, `limit` after `afterId` (llms-full.txt, streamed). */
export function publishedBodies(db: Executor, siteId: string, afterId: number, limit: number) {
  return published(db, siteId)
    .select(['contents.id', 'contents.title', 'contents.slug', 'contents.locale', 'contents.type', bodyOf(siteId)])
    .where('contents.id', '>', afterId)
    .orderBy('contents.id')
    .limit(limit)
    .execute();
}

/** One published content by slug and locale, with its body (markdown output). */
export function publishedBySlug(db: Executor, siteId: string, slug: string, locale: string) {
  return published(db, siteId)
    .select(['contents.id', 'contents.title', bodyOf(siteId)])
    .where('contents.slug', '=', slug)
    .where('contents.locale', '=', locale)
    .executeTakeFirst();
}

/** Published contents changed after `since` (all when null), oldest change first (IndexNow). */
export function publishedChangedSince(db: Executor, siteId: string, since: string | null, limit: number) {
  let q = published(db, siteId).select(['contents.id', 'contents.slug', 'contents.locale', 'contents.type', 'contents.updated_at']);
  if (since) q = q.where('contents.updated_at', '>', since);
  return q.orderBy('contents.updated_at').orderBy('contents.id').limit(limit).execute();
}

/** How many contents are published and their last change (the llms-full.txt version). */
export function publishedVersion(db: Executor, siteId: string) {
  return published(db, siteId)
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('contents.updated_at').as('last')])
    .executeTakeFirst();
}

/** Category or tag slugs of each published content (sitemap rules by category or tag). */
export function publishedLinkSlugs(db: Executor, siteId: string, kind: 'category' | 'tag') {
  const q = published(db, siteId);
  return kind === 'category'
    ? q
        .innerJoin('content_categories as l', 'l.content_id', 'contents.id')
        .innerJoin('categories as t', 't.id', 'l.category_id')
        .select(['l.content_id', 't.slug'])
        .where('l.site_id', '=', siteId)
        .execute()
    : q
        .innerJoin('content_tags as l', 'l.content_id', 'contents.id')
        .innerJoin('tags as t', 't.id', 'l.tag_id')
        .select(['l.content_id', 't.slug'])
        .where('l.site_id', '=', siteId)
        .execute();
}
