import type { Db } from './db/types.js';
import { countSites, createSite } from './modules/sites/sites.service.js';
import { createToken } from './modules/api-tokens/api-tokens.service.js';

/**
 * First start on an empty database: create a site and a management token holding every scope,
 * so a new user can call the API at once (issue 2, item 1). Returns null when sites exist.
 */
export async function bootstrapIfEmpty(db: Db) {
  if ((await countSites(db)) > 0) return null;
  const site = await createSite(db, { name: 'My Site', domain: 'localhost' });
  const token = await createToken(db, { siteId: site.id, userId: site.ownerUserId, name: 'First-start token', scopes: 'all' });
  return { site, token: token.token };
}
