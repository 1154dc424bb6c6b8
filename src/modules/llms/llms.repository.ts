import type { Executor } from '../../db/types.js';

/** A page of the site's published contents for llms.txt, newest first (keyset on published_at, id). */
export function publishedForIndex(db: Executor, siteId: string, limit: number, offset: number) {
  return db
    .selectFrom('contents')
    .select((eb) => [
      'contents.id',
      'contents.title',
      'contents.slug',
      'contents.locale',
      'contents.type',
      'contents.excerpt',
      'contents.meta_description',
      'contents.published_at',
      eb
        .selectFrom('content_categories')
        .select('content_categories.category_id')
        .whereRef('content_categories.content_id', '=', 'contents.id')
        .where('content_categories.site_id', '=', siteId)
        .orderBy('content_categories.position')
        .limit(1)
        .as('first_category_id'),
    ])
    .where('contents.site_id', '=', siteId)
    .where('contents.status', '=', 'published')
    .orderBy('contents.published_at', 'desc')
    .orderBy('contents.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Published contents with their bodies, oldest first, `limit` after `afterId` (llms-full.txt, streamed). */
export function publishedBodies(db: Executor, siteId: string, afterId: number, limit: number) {
  return db
    .selectFrom('contents')
    .select(['id', 'title', 'slug', 'locale', 'type', 'excerpt', 'body', 'published_at'])
    .where('site_id', '=', siteId)
    .where('status', '=', 'published')
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** One published content by slug, in a locale or the site's default one. */
export function publishedBySlug(db: Executor, siteId: string, slug: string, locale: string) {
  return db
    .selectFrom('contents')
    .select(['id', 'title', 'slug', 'locale', 'type', 'excerpt', 'body', 'published_at', 'updated_at'])
    .where('site_id', '=', siteId)
    .where('status', '=', 'published')
    .where('slug', '=', slug)
    .where('locale', '=', locale)
    .executeTakeFirst();
}

export function categoriesOf(db: Executor, siteId: string) {
  return db.selectFrom('categories').select(['id', 'name', 'slug', 'parent_id']).where('site_id', '=', siteId).execute();
}

export function siteName(db: Executor, siteId: string) {
  return db.selectFrom('sites').select(['name', 'default_locale']).where('id', '=', siteId).executeTakeFirst();
}

/** What llms-full.txt depends on: how many contents are published, their last change, and the site's. */
export function publishedVersion(db: Executor, siteId: string) {
  return db
    .selectFrom('sites')
    .select((eb) => [
      'sites.updated_at as site_updated_at',
      eb.selectFrom('contents').select(eb.fn.countAll<number>().as('n')).where('site_id', '=', siteId).where('status', '=', 'published').as('published'),
      eb.selectFrom('contents').select(eb.fn.max('updated_at').as('last')).where('site_id', '=', siteId).where('status', '=', 'published').as('last_change'),
    ])
    .where('sites.id', '=', siteId)
    .executeTakeFirst();
}
