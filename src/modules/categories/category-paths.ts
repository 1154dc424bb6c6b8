import type { Executor } from '../../db/types.js';

/**
 * The one-way read API of categories for the SEO outputs: nested content URLs walk a category's
 * parents, llms.txt names its sections after them. The seo module imports this file, never the
 * categories repository.
 */
export function siteCategories(db: Executor, siteId: string) {
  return db.selectFrom('categories').select(['id', 'name', 'slug', 'parent_id']).where('site_id', '=', siteId).execute();
}
