import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/types.js';
import { notModified, sendCacheable } from '../../shared/http-cache.js';
import { SiteKeyParam, SiteKeyQuery, SlugParams } from '../../shared/schemas.js';
import type { App, ModuleDeps } from '../types.js';
import * as service from './llms.service.js';
import type { OutputCache } from './seo.cache.js';

const tags = ['Text outputs for AI crawlers'];
const TEXT = 'text/plain; charset=utf-8';
const MARKDOWN = 'text/markdown; charset=utf-8';
const TextFile = { description: 'text', type: 'string' } as const;
const NotModified = { description: 'Not modified', type: 'null' } as const;
const LocaleQuery = Type.Object({
  locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35 })),
  siteKey: SiteKeyParam,
});

const off = 'A 404 while the SEO setting `llmsTxtEnabled` is off.';
const docs = {
  index: `llms.txt (llmstxt.org): the site name, the \`>\` summary (\`llmsSiteDescription\`), a section per category with its ${service.SECTION_SIZE} newest published contents as \`- [title](url): description\`, then \`## Optional\` with older ones. ${off}`,
  full: `Every published content as markdown with its URL, oldest first, streamed, cut after ${service.FULL_MAX_BYTES} bytes with a note. ${off}`,
  markdown: `One published content as markdown (\`# title\`, then the body); \`?locale=\` or the default locale. ${off}`,
  page: `One published page site block as markdown: \`# name\`, then its fields in schema order (text, rich text, links and images; objects under headings; booleans, colors and data sources left out); \`?locale=\` or the default locale. ${off}`,
};

async function sendFull(db: Db, siteId: string, req: FastifyRequest, reply: FastifyReply, maxAge: number) {
  const etag = `W/"${await service.llmsFullVersion(db, siteId)}"`;
  // Built first: while llms.txt is off, the answer is a 404 whatever the request names.
  const body = await service.llmsFull(db, siteId);
  reply.header('content-type', TEXT).header('x-content-type-options', 'nosniff');
  if (notModified(req, reply, etag, `public, max-age=${maxAge}`)) return reply.send();
  return reply.send(Readable.from(body) as never);
}

/** llms.txt, llms-full.txt and markdown of contents and pages (decisions S3, S9, S15, G20). */
export function llmsRoutes(app: App, { db }: ModuleDeps, outputs: OutputCache): void {
  for (const [prefix, scope, maxAge] of [
    ['', 'seo.view', 0],
    ['/public', 'public', 300],
  ] as const) {
    const isPublic = scope === 'public';
    const siteOf = (req: FastifyRequest) => (isPublic ? req.publicSite.siteId : req.auth.siteId);
    const config = isPublic ? { scope, siteKey: true } : { scope };
    const suffix = isPublic ? 'Public' : '';
    const also = isPublic ? ' With the site key, `ETag`, `Cache-Control: public, max-age=300` and 304.' : '';

    app.get(
      `${prefix}/llms.txt`,
      {
        config,
        schema: {
          tags,
          operationId: `getLlmsTxt${suffix}`,
          summary: 'llms.txt',
          description: docs.index + also,
          querystring: SiteKeyQuery,
          response: { 200: TextFile, 304: NotModified, 404: { $ref: 'Error#' } },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) =>
        sendCacheable(req, reply, await outputs.get(siteOf(req), 'llms.txt', () => service.llmsTxt(db, siteOf(req))), TEXT, maxAge),
    );

    app.get(
      `${prefix}/llms-full.txt`,
      {
        config,
        schema: {
          tags,
          operationId: `getLlmsFullTxt${suffix}`,
          summary: 'llms-full.txt',
          description: docs.full + also,
          querystring: SiteKeyQuery,
          response: { 200: TextFile, 304: NotModified, 404: { $ref: 'Error#' } },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => sendFull(db, siteOf(req), req, reply, maxAge),
    );

    for (const [kind, operationId, summary, description, build] of [
      ['content', `getContentMarkdown${suffix}`, 'A published content as markdown', docs.markdown, service.contentAsMarkdown],
      ['pages', `getPageMarkdown${suffix}`, 'A published page site block as markdown', docs.page, service.pageAsMarkdown],
    ] as const) {
      app.get(
        `${prefix}/markdown/${kind}/:slug`,
        {
          config,
          schema: {
            tags,
            operationId,
            summary,
            description: description + also,
            params: SlugParams,
            querystring: LocaleQuery,
            response: { 200: { description: 'text/markdown', type: 'string' }, 304: NotModified, 404: { $ref: 'Error#' } },
          },
        },
        async (req: FastifyRequest<{ Params: { slug: string }; Querystring: { locale?: string } }>, reply: FastifyReply) =>
          sendCacheable(
            req,
            reply,
            await outputs.get(siteOf(req), `markdown:${kind}:${req.query.locale ?? ''}:${req.params.slug}`, () =>
              build(db, siteOf(req), req.params.slug, req.query.locale),
            ),
            MARKDOWN,
            maxAge,
          ),
      );
    }
  }
}
