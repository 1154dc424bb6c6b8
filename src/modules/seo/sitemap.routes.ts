import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { MULTIPART_ERRORS } from '../../shared/multipart.js';
import { ImportResultRef, importBody, importReader } from '../../kit/import.js';
import { route } from '../../kit/resource.js';
import { csvLine } from '../../shared/csv.js';
import { sendCacheable } from '../../shared/http-cache.js';
import { named, ref, SiteKeyQuery } from '../../shared/schemas.js';
import type { App, ModuleDeps } from '../types.js';
import { EntryListQuery, sitemapEntries, sitemapRules, sitemapSources } from './sitemap.resource.js';
import * as service from './sitemap.service.js';
import type { OutputCache } from './seo.cache.js';

const tags = ['Sitemap'];
const EntryRef = ref(sitemapEntries.schemas.Schema);
const EntryCreate = sitemapEntries.schemas.CreateBody;
const SitemapUrlItem = Type.Object({
  url: Type.String(),
  lastmod: Type.Union([Type.String(), Type.Null()]),
  changefreq: Type.String(),
  priority: Type.Number(),
});
const PreviewRef = ref(
  named(
    'SitemapPreviewEntry',
    Type.Object({ ...SitemapUrlItem.properties, source: Type.String({ description: '`content`, `site-block` (a published page) or `custom`' }) }),
  ),
);
const RuleRef = ref(sitemapRules.schemas.Schema);
const SourceRef = ref(sitemapSources.schemas.Schema);
const XmlFile = { description: 'application/xml', type: 'string' } as const;

const entryImport = importReader<service.EntryInput>({
  schema: EntryCreate,
  columns: { is_external: 'isExternal', last_modified: 'lastModified' },
  required: ['url'],
  maxRows: service.MAX_IMPORT_ROWS,
  maxFileBytes: 32 * 1024 * 1024,
});

const XML = 'application/xml; charset=utf-8';
const xmlDoc =
  'The sitemap protocol (sitemaps.org 0.9): published contents at the URLs the SEO settings build, with `xhtml:link` alternates for their published ' +
  'translations (reciprocal, `x-default` for the default locale), then the custom entries. More than 50,000 URLs, or `sitemapIndexEnabled`, make it a ' +
  'sitemap index of `/sitemap-<n>.xml` parts.';

/** Custom sitemap entries, the preview, and the sitemap outputs (decisions S1, S7, G18, G20). */
export function sitemapRoutes(app: App, { db }: ModuleDeps, outputs: OutputCache): void {
  const entries = sitemapEntries.routes(db);
  app.route({ ...entries.list, schema: { ...entries.list.schema, querystring: EntryListQuery } });
  // Create and update answer the bare entry (spec "Sitemap entry"), not `{ data }`.
  app.route(
    route({
      ...entries.create,
      schema: { ...entries.create.schema, response: { 201: EntryRef } },
      handler: async (req, reply) => reply.code(201).send(await sitemapEntries.service.create(db, req.auth.siteId, req.body)),
    }),
  );

  app.get(
    '/sitemap/entries/export',
    {
      config: { scope: 'sitemap.export' },
      schema: {
        tags,
        operationId: 'exportSitemapEntries',
        summary: 'Custom entries as CSV: url, priority, changefreq, title, is_external, last_modified',
        response: { 200: { description: 'text/csv', type: 'string' } },
      },
    },
    async (req, reply) => {
      const rows = await service.listAllForExport(db, req.auth.siteId);
      async function* lines() {
        yield csvLine(['url', 'priority', 'changefreq', 'title', 'is_external', 'last_modified']);
        for (const e of rows) yield csvLine([e.url, e.priority, e.changefreq, e.title, e.isExternal, e.lastModified]);
      }
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="sitemap-entries.csv"')
        .send(Readable.from(lines()) as never);
    },
  );

  app.post(
    '/sitemap/entries/import',
    {
      config: { scope: 'sitemap.import' },
      schema: {
        tags,
        operationId: 'importSitemapEntries',
        summary: 'Import custom entries from a CSV file (multipart, field `file`) or { entries }',
        description: `Up to ${service.MAX_IMPORT_ROWS} rows, each checked like a create; bad rows listed by number, URLs already present skipped, the rest stored at once.`,
        body: importBody(service.MAX_IMPORT_ROWS, 'An entry: url, isExternal, priority, changefreq, lastModified, title'),
        response: { 201: ImportResultRef, ...MULTIPART_ERRORS, 413: { $ref: 'Error#' } },
      },
    },
    async (req, reply) => reply.code(201).send(await service.importEntries(db, req.auth.siteId, await entryImport.fromRequest(req))),
  );

  app.route(
    route({
      ...entries.update,
      schema: { ...entries.update.schema, response: { 200: EntryRef } },
      handler: (req) => sitemapEntries.service.update(db, req.auth.siteId, req.params.id, req.body),
    }),
  );
  app.route(entries.delete);

  app.get(
    '/sitemap/rules',
    {
      config: { scope: 'sitemap.view' },
      schema: {
        tags,
        operationId: 'listSitemapRules',
        summary: 'Sitemap rules in the order they are tried',
        response: { 200: Type.Object({ data: Type.Array(RuleRef) }) },
      },
    },
    async (req) => ({ data: await service.listRules(db, req.auth.siteId) }),
  );

  const rules = sitemapRules.routes(db);
  for (const route of [rules.create, rules.update, rules.delete]) app.route(route);

  app.get(
    '/sitemap/sources',
    {
      config: { scope: 'sitemap.view' },
      schema: {
        tags,
        operationId: 'listSitemapSources',
        summary: 'Other sitemaps the sitemap index lists',
        response: { 200: Type.Object({ data: Type.Array(SourceRef) }) },
      },
    },
    async (req) => ({ data: await service.listSources(db, req.auth.siteId) }),
  );

  const sources = sitemapSources.routes(db);
  for (const route of [sources.create, sources.get, sources.update, sources.delete]) app.route(route);

  app.get(
    '/sitemap/preview',
    {
      config: { scope: 'sitemap.view' },
      schema: {
        tags,
        operationId: 'previewSitemap',
        summary: 'Every URL the sitemap holds, with where it comes from',
        response: { 200: Type.Object({ data: Type.Array(PreviewRef) }) },
      },
    },
    async (req) => ({
      data: (await service.sitemapUrls(db, req.auth.siteId)).map((u) => ({
        url: u.loc,
        lastmod: u.lastmod,
        changefreq: u.changefreq,
        priority: u.priority,
        source: u.source,
      })),
    }),
  );

  app.get(
    '/seo/sitemap.xml',
    {
      config: { scope: 'seo.view' },
      schema: { tags: ['SEO'], operationId: 'getSitemapXml', summary: 'sitemap.xml', description: xmlDoc, response: { 200: XmlFile } },
    },
    async (req: FastifyRequest, reply: FastifyReply) =>
      sendCacheable(req, reply, await outputs.get(req.auth.siteId, 'sitemap.xml', () => service.sitemapXml(db, req.auth.siteId)), XML, 0),
  );

  app.get(
    '/seo/sitemap.json',
    {
      config: { scope: 'seo.view' },
      schema: {
        tags: ['SEO'],
        operationId: 'getSitemapJson',
        summary: 'The sitemap as JSON: every URL, unsplit',
        response: { 200: Type.Object({ data: Type.Array(SitemapUrlItem) }) },
      },
    },
    async (req) => ({
      data: (await service.sitemapUrls(db, req.auth.siteId)).map((u) => ({ url: u.loc, lastmod: u.lastmod, changefreq: u.changefreq, priority: u.priority })),
    }),
  );

  app.get(
    '/public/sitemap.xml',
    {
      config: { scope: 'public', siteKey: true },
      schema: {
        tags: ['SEO'],
        operationId: 'getSitemapXmlPublic',
        summary: 'sitemap.xml with the site key, for the front end to serve at /sitemap.xml',
        description: `${xmlDoc} With \`ETag\`, \`Cache-Control: public, max-age=300\` and 304.`,
        querystring: SiteKeyQuery,
        response: { 200: XmlFile, 304: { description: 'Not modified', type: 'null' } },
      },
    },
    async (req: FastifyRequest, reply: FastifyReply) =>
      sendCacheable(req, reply, await outputs.get(req.publicSite.siteId, 'sitemap.xml', () => service.sitemapXml(db, req.publicSite.siteId)), XML),
  );

  app.get(
    '/public/sitemap-:part.xml',
    {
      config: { scope: 'public', siteKey: true },
      schema: {
        tags: ['SEO'],
        operationId: 'getSitemapPartPublic',
        summary: 'Part n (from 1) of a sitemap index, for the front end to serve at /sitemap-<n>.xml',
        params: Type.Object({ part: Type.Integer({ minimum: 1, maximum: 100_000 }) }),
        querystring: SiteKeyQuery,
        response: { 200: XmlFile, 304: { description: 'Not modified', type: 'null' }, 404: { $ref: 'Error#' } },
      },
    },
    async (req: FastifyRequest<{ Params: { part: number } }>, reply: FastifyReply) =>
      sendCacheable(
        req,
        reply,
        await outputs.get(req.publicSite.siteId, `sitemap-${req.params.part}.xml`, () => service.sitemapPartXml(db, req.publicSite.siteId, req.params.part)),
        XML,
      ),
  );
}
