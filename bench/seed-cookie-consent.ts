/**
 * The cookie banner of the bench site (issue 33), enabled through the service with two services
 * declared, and the ETag its public config answers (for the 304 row).
 */
import type { Db } from '../src/db/types.js';
import { publicConfig } from '../src/modules/cookie-consent/cookie-consent.records.js';
import { updateSettings } from '../src/modules/cookie-consent/cookie-consent.settings.js';
import { etagOf } from '../src/shared/http-cache.js';
import type { BenchContext } from './endpoints.js';

export async function seedCookieConsent(db: Db, siteId: string, _userId: string, _ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  await updateSettings(db, siteId, {
    enabled: true,
    services: [
      { key: 'matomo', name: 'Matomo', category: 'analytics', cookies: [{ name: '_pk_id', duration: '13 months' }] },
      { key: 'ads', name: 'Ad network', category: 'marketing' },
    ],
  });
  const consentConfigEtag = etagOf(JSON.stringify({ data: await publicConfig(db, siteId) }));
  return { consentConfigEtag, summary: 'the cookie banner enabled, 3 categories, 2 services' };
}
