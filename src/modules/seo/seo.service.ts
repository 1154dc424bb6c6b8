import type { Executor } from '../../db/types.js';
import { now } from '../../db/json.js';
import type { ApiOf } from '../../kit/fields.js';
import { invalid } from '../../shared/errors.js';
import * as repo from './seo.repository.js';
import { SEO_DEFAULTS, seoFields } from './seo.resource.js';

export type SeoSettings = ApiOf<typeof seoFields.fields>;
type Row = Record<string, unknown>;

/** The site's settings row, written with the defaults on first use. */
async function settingsRow(db: Executor, siteId: string): Promise<Row> {
  const found = await repo.findSettings(db, siteId);
  if (found) return found;
  const at = now();
  await repo.insertDefaults(db, { site_id: siteId, ...SEO_DEFAULTS, created_at: at, updated_at: at });
  return (await repo.findSettings(db, siteId))!;
}

export async function getSettings(db: Executor, siteId: string): Promise<SeoSettings> {
  return seoFields.toApi(await settingsRow(db, siteId));
}

/** Partial update; IndexNow cannot be on without a key (422 on indexNowKey). */
export async function updateSettings(db: Executor, siteId: string, input: Row): Promise<SeoSettings> {
  return db.transaction().execute(async (tx) => {
    const current = seoFields.toApi(await settingsRow(tx, siteId));
    const enabled = input.indexNowEnabled ?? current.indexNowEnabled;
    const key = input.indexNowKey !== undefined ? input.indexNowKey : current.indexNowKey;
    if (enabled && !key) throw invalid('VALIDATION_FAILED', 'indexNowKey', 'IndexNow needs a key (8-64 letters, digits or hyphens) to be enabled.');
    const patch = seoFields.patch(input);
    // Switched on: what changes from now is submitted (the sitemap tells search engines the rest).
    if (input.indexNowEnabled === true && !current.indexNowEnabled) patch.index_now_submitted_until = now();
    // A new key has not been verified.
    if (input.indexNowKey !== undefined && input.indexNowKey !== current.indexNowKey) patch.index_now_last_verified_at = null;
    await repo.updateSettings(tx, siteId, { ...patch, updated_at: now() });
    return seoFields.toApi((await repo.findSettings(tx, siteId))!);
  });
}
