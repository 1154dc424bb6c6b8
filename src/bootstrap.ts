import { dialectOf } from './db/dialect.js';
import type { Db } from './db/types.js';
import { countSites, insertSite } from './modules/sites/sites.service.js';
import { createToken } from './modules/api-tokens/api-tokens.service.js';

/**
 * First start on an empty database: create a site and a management token holding every scope,
 * so a new user can call the API at once (issue 2, item 1). Returns null when sites exist.
 * Counting and creating run in one transaction under a lock every instance takes (decisions
 * HR3): replicas started together on an empty database create one site, and none crashes.
 */
export async function bootstrapIfEmpty(db: Db) {
  if ((await countSites(db)) > 0) return null;
  return db.transaction().execute(async (tx) => {
    const lock = dialectOf(tx).instanceLock('cairn:first-start');
    if (lock) await lock.execute(tx);
    if ((await countSites(tx)) > 0) return null;
    const site = await insertSite(tx, { name: 'My Site', domain: 'localhost', defaultLocale: 'en' });
    const token = await createToken(tx, { siteId: site.id, userId: site.ownerUserId, name: 'First-start token', scopes: 'all' });
    return { site, token: token.token };
  });
}
