import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { named, ref } from '../../shared/schemas.js';
import { sendCacheable } from '../../shared/http-cache.js';
import type { Executor } from '../../db/types.js';
import type { AppModule } from '../types.js';
import { renderRobots } from './seo.robots.js';
import { seoFields } from './seo.resource.js';
import * as service from './seo.service.js';
import { absoluteUrl, loadUrlContext } from './seo.urls.js';

const tags = ['SEO'];
const SeoSettingsRef = ref(named('SeoSettings', seoFields.response()));
const SeoSettingsUpdate = seoFields.updateBody();
const TextFile = { description: 'text/plain', type: 'string' } as const;

async function robotsFor(db: Executor, siteId: string): Promise<string> {
  const [settings, urls] = await Promise.all([service.getSettings(db, siteId), loadUrlContext(db, siteId)]);
  // The front end serves the sitemap at its root (proxying /v1/public/sitemap.xml).
  return renderRobots(settings, absoluteUrl(urls!, '/sitemap.xml'));
}

/** SEO settings and robots.txt (spec "SEO", decisions S2, G18, G20). */
export const seoModule: AppModule = {
  name: 'seo',
  routes(app, { db }) {
    app.get(
      '/seo/settings',
      {
        config: { scope: 'seo.view' },
        schema: { tags, operationId: 'getSeoSettings', summary: 'SEO settings (a bare object)', response: { 200: SeoSettingsRef } },
      },
      async (req) => service.getSettings(db, req.auth.siteId),
    );

    app.put(
      '/seo/settings',
      {
        config: { scope: 'seo.update' },
        schema: {
          tags,
          operationId: 'updateSeoSettings',
          summary: 'Change SEO settings (partial)',
          description: '`indexNowEnabled: true` needs an `indexNowKey` (422 on `indexNowKey`). Changing the key clears `indexNowLastVerifiedAt`.',
          body: SeoSettingsUpdate,
          response: { 200: SeoSettingsRef },
        },
      },
      async (req) => service.updateSettings(db, req.auth.siteId, req.body),
    );

    const robotsDoc =
      'The `robotsRules` groups in order, then the AI crawler group `aiCrawlers` asks for, then `Sitemap: https://<domain>/sitemap.xml` when `robotsSitemapLink`.';
    app.get(
      '/seo/robots.txt',
      {
        config: { scope: 'seo.view' },
        schema: { tags, operationId: 'getRobotsTxt', summary: 'robots.txt as the settings render it', description: robotsDoc, response: { 200: TextFile } },
      },
      async (req: FastifyRequest, reply: FastifyReply) => sendCacheable(req, reply, await robotsFor(db, req.auth.siteId), 'text/plain; charset=utf-8', 0),
    );

    app.get(
      '/public/robots.txt',
      {
        config: { scope: 'public', siteKey: true },
        schema: {
          tags,
          operationId: 'getRobotsTxtPublic',
          summary: 'robots.txt with the site key, for the front end to serve at /robots.txt',
          description: `${robotsDoc} With \`ETag\`, \`Cache-Control: public, max-age=300\` and 304.`,
          querystring: Type.Object({ siteKey: Type.Optional(Type.String({ maxLength: 100 })) }),
          response: { 200: TextFile, 304: { description: 'Not modified', type: 'null' } },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => sendCacheable(req, reply, await robotsFor(db, req.publicSite.siteId), 'text/plain; charset=utf-8'),
    );
  },
};
