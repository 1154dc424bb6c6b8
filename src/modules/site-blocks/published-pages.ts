import type { Executor } from '../../db/types.js';

/**
 * The one-way read API of site blocks for the SEO outputs (sitemaps, llms.txt, page markdown):
 * published page blocks. The seo module imports this file, never the site-blocks repository.
 */

export interface PublishedPage {
  id: number;
  name: string;
  slug: string;
  path: string;
  locale: string;
  translation_group: string;
  schema: unknown;
  data: unknown;
  published_snapshot: unknown;
  published_at: string | null;
  updated_at: string;
}

const PAGE_COLUMNS = [
  'id',
  'name',
  'slug',
  'path',
  'locale',
  'translation_group',
  'schema',
  'data',
  'published_snapshot',
  'published_at',
  'updated_at',
] as const;

/** Every published page block of the site, by path then locale (sitemaps, llms.txt). */
export function publishedPages(db: Executor, siteId: string, withData = false): Promise<PublishedPage[]> {
  const columns = withData ? PAGE_COLUMNS : PAGE_COLUMNS.filter((c) => c !== 'schema' && c !== 'data' && c !== 'published_snapshot');
  return db
    .selectFrom('site_blocks')
    .select(columns as never)
    .where('site_id', '=', siteId)
    .where('type', '=', 'page')
    .where('status', '=', 'published')
    .orderBy('path')
    .orderBy('locale')
    .execute() as Promise<PublishedPage[]>;
}

/** One published page block by slug and locale, with its data. */
export function publishedPage(db: Executor, siteId: string, slug: string, locale: string): Promise<PublishedPage | undefined> {
  return db
    .selectFrom('site_blocks')
    .select([...PAGE_COLUMNS])
    .where('site_id', '=', siteId)
    .where('locale', '=', locale)
    .where('slug', '=', slug)
    .where('type', '=', 'page')
    .where('status', '=', 'published')
    .executeTakeFirst() as Promise<PublishedPage | undefined>;
}

/** How many page blocks are published and their last change: a version of what the outputs show of pages. */
export function publishedPagesVersion(db: Executor, siteId: string) {
  return db
    .selectFrom('site_blocks')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('updated_at').as('last')])
    .where('site_id', '=', siteId)
    .where('type', '=', 'page')
    .where('status', '=', 'published')
    .executeTakeFirst();
}
