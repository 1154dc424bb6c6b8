import type { Executor } from '../../db/types.js';

/** The site's name: the H1 of llms.txt. */
export function siteName(db: Executor, siteId: string) {
  return db.selectFrom('sites').select(['name', 'default_locale']).where('id', '=', siteId).executeTakeFirst();
}
