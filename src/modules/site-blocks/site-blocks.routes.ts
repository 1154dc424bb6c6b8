import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { PageQuery } from '../../shared/pagination.js';
import { sendCacheable } from '../../shared/http-cache.js';
import { CopyToLocaleBody, Data, Message, Paginated, ref, TranslationStatus } from '../../shared/schemas.js';
import type { AppModule } from '../types.js';
import {
  DataBody,
  LocaleQuery,
  PathQuery,
  PublicPathQuery,
  PublicSlugQuery,
  RevisionParams,
  SchemaBody,
  SiteBlock,
  SiteBlockCreate,
  SiteBlockListQuery,
  SiteBlockRevision,
  SiteBlockSettings,
  SiteBlockSettingsBody,
  SiteBlockSummary,
  SiteBlockUpdate,
  SlugParams,
} from './site-blocks.resource.js';
import * as service from './site-blocks.service.js';
import { SITE_BLOCK_EVENTS } from './site-blocks.events.js';

const tags = ['Site blocks'];
const One = Data(ref(SiteBlock));
const JSON_TYPE = 'application/json; charset=utf-8';
const RevisionQuery = Type.Object({ ...PageQuery.properties, ...LocaleQuery.properties });
const addressing = "Blocks are addressed by slug in `?locale=` (default: the site's default locale).";
const delivery = 'Delivery tokens see published blocks only (others are 404) and, with staged publishing, what was last published.';

/** A block answer with its ETag: 304 when the reader has it (the body serialized by the route's response schema). */
function cacheable(req: FastifyRequest, reply: FastifyReply, block: unknown, cache: number | string) {
  return sendCacheable(req, reply, reply.serialize({ data: block }) as string, JSON_TYPE, cache);
}

const TOKEN_CACHE = 'private, no-cache';
const PUBLIC_MAX_AGE = 60;

export const siteBlocksModule: AppModule = {
  name: 'site-blocks',
  events: SITE_BLOCK_EVENTS,
  routes(app, { db }) {
    app.get(
      '/site-blocks',
      {
        config: { scope: 'site_blocks.view' },
        schema: {
          tags,
          operationId: 'listSiteBlocks',
          summary: 'List site blocks (summaries: no schema or data)',
          description: `Filters \`type\`, \`status\`, \`path\`, \`locale\`, \`search\` (name, slug, path), \`translationGroup\` and the shared ones (decisions B2). ${delivery}`,
          querystring: SiteBlockListQuery,
          response: { 200: Paginated(ref(SiteBlockSummary)) },
        },
      },
      async (req) => service.listBlocks(db, req.auth, req.query),
    );

    app.post(
      '/site-blocks',
      {
        config: { scope: 'site_blocks.create' },
        schema: {
          tags,
          operationId: 'createSiteBlock',
          summary: 'Create a site block (a draft with data {})',
          description:
            'A `page` block needs a `path`, unique in its locale; a `global` block has none. The slug is generated from the name when omitted (G17) and is permanent. A `schema` may be given now or later with PUT .../schema.',
          body: SiteBlockCreate,
          response: { 201: One, 409: { $ref: 'Error#', description: 'The translation group already has a member in that locale' } },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createBlock(db, req.auth, req.body) }),
    );

    app.get(
      '/site-blocks/settings',
      {
        config: { scope: 'site_blocks.view', managementOnly: true },
        schema: {
          tags,
          operationId: 'getSiteBlockSettings',
          summary: 'Site-block settings (staged publishing)',
          response: { 200: Data(ref(SiteBlockSettings)) },
        },
      },
      async (req) => ({ data: await service.getSettings(db, req.auth.siteId) }),
    );

    app.put(
      '/site-blocks/settings',
      {
        config: { scope: 'site_blocks.publish' },
        schema: {
          tags,
          operationId: 'updateSiteBlockSettings',
          summary: 'Turn staged publishing on or off',
          description:
            'Off (default): data edited on a published block is live at once, as the spec says. On: a published block keeps serving what was last published until it is published again; `hasUnpublishedChanges` tells editors. Turning it off makes every working copy live at once.',
          body: SiteBlockSettingsBody,
          response: { 200: Data(ref(SiteBlockSettings)) },
        },
      },
      async (req) => ({ data: await service.putSettings(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/site-blocks/by-path',
      {
        config: { scope: 'site_blocks.view' },
        schema: {
          tags,
          operationId: 'getSiteBlockByPath',
          summary: 'The page block of a path, as a front end routes it (ETag, 304)',
          description: `\`?path=/about&locale=de\`, or \`?path=/de/about\`: without \`locale\`, a first segment naming an enabled locale picks it. dataSource fields resolved. ${delivery}`,
          querystring: PathQuery,
          response: { 200: One },
        },
      },
      async (req, reply) =>
        cacheable(req, reply, await service.getBlockByPath(db, req.auth.siteId, req.query.path, req.query.locale, service.audienceOf(req.auth)), TOKEN_CACHE),
    );

    app.get(
      '/site-blocks/:slug',
      {
        config: { scope: 'site_blocks.view' },
        schema: {
          tags,
          operationId: 'getSiteBlock',
          summary: 'A site block with its dataSource fields resolved (ETag, 304)',
          description: `${addressing} ${delivery}`,
          params: SlugParams,
          querystring: LocaleQuery,
          response: { 200: One },
        },
      },
      async (req, reply) =>
        cacheable(req, reply, await service.getBlock(db, req.auth.siteId, req.params.slug, req.query.locale, service.audienceOf(req.auth)), TOKEN_CACHE),
    );

    app.put(
      '/site-blocks/:slug',
      {
        config: { scope: 'site_blocks.update' },
        schema: {
          tags,
          operationId: 'updateSiteBlock',
          summary: 'Rename a block, change its type or its path (partial; the slug is permanent)',
          description: `${addressing} Schema and data have their own endpoints.`,
          params: SlugParams,
          querystring: LocaleQuery,
          body: SiteBlockUpdate,
          response: { 200: One },
        },
      },
      async (req) => ({ data: await service.updateBlock(db, req.auth, req.params.slug, req.query.locale, req.body) }),
    );

    app.delete(
      '/site-blocks/:slug',
      {
        config: { scope: 'site_blocks.delete' },
        schema: {
          tags,
          operationId: 'deleteSiteBlock',
          summary: 'Delete a site block with all its revisions',
          params: SlugParams,
          querystring: LocaleQuery,
          response: { 200: Message },
        },
      },
      async (req) => {
        await service.deleteBlock(db, req.auth, req.params.slug, req.query.locale);
        return { message: 'Site block deleted.' };
      },
    );

    app.put(
      '/site-blocks/:slug/schema',
      {
        config: { scope: 'site_blocks.schema' },
        schema: {
          tags,
          operationId: 'updateSiteBlockSchema',
          summary: 'Replace the field schema; the data is kept',
          description:
            'All 17 field types, `items` of arrays, nested objects, at most 250 fields per level and 5 levels (B1). dataSource fields (B2): `source` one of contents, categories, tags, variables, forms, siteBlocks, `filters` the list filters of that group (checked), `limit` 1-100 (default 10); at most 10 per schema, never inside arrays. Data fields no longer in the schema become orphans: readable, not validated.',
          params: SlugParams,
          querystring: LocaleQuery,
          body: SchemaBody,
          response: { 200: One },
        },
      },
      async (req) => ({ data: await service.putSchema(db, req.auth, req.params.slug, req.query.locale, req.body.schema) }),
    );

    app.put(
      '/site-blocks/:slug/data',
      {
        config: { scope: 'site_blocks.update' },
        schema: {
          tags,
          operationId: 'updateSiteBlockData',
          summary: 'Change data fields (only those sent); writes a revision',
          description:
            'The sent fields are merged into the stored data (objects key by key; arrays and other values replaced; `null` clears). The result is validated against the schema, with paths like `data.hero.title`. A change writes a revision listing only what changed; a PUT that changes nothing writes nothing. dataSource fields are read-only (422).',
          params: SlugParams,
          querystring: LocaleQuery,
          body: DataBody,
          response: { 200: One },
        },
      },
      async (req) => ({ data: await service.putData(db, req.auth, req.params.slug, req.query.locale, req.body.data as Record<string, unknown>) }),
    );

    app.post(
      '/site-blocks/:slug/publish',
      {
        config: { scope: 'site_blocks.publish' },
        schema: {
          tags,
          operationId: 'publishSiteBlock',
          summary: 'Publish: visible to delivery tokens and public reads (site_block.published)',
          description:
            'With staged publishing, also how edits of a published block go live. Publishing a block with nothing new changes nothing and sends no event.',
          params: SlugParams,
          querystring: LocaleQuery,
          response: { 200: One },
        },
      },
      async (req) => ({ data: await service.publishBlock(db, req.auth, req.params.slug, req.query.locale) }),
    );

    app.post(
      '/site-blocks/:slug/unpublish',
      {
        config: { scope: 'site_blocks.publish' },
        schema: {
          tags,
          operationId: 'unpublishSiteBlock',
          summary: 'Back to draft: hidden from delivery tokens and public reads (site_block.unpublished)',
          params: SlugParams,
          querystring: LocaleQuery,
          response: { 200: One },
        },
      },
      async (req) => ({ data: await service.unpublishBlock(db, req.auth, req.params.slug, req.query.locale) }),
    );

    app.get(
      '/site-blocks/:slug/translations',
      {
        config: { scope: 'site_blocks.view', managementOnly: true },
        schema: {
          tags,
          operationId: 'getSiteBlockTranslations',
          summary: 'Translation status per enabled locale',
          description: 'Compared: the name and each data field the source fills; a member not published where the source is, is partial (G10).',
          params: SlugParams,
          querystring: LocaleQuery,
          response: { 200: TranslationStatus },
        },
      },
      async (req) => ({ data: await service.translations(db, req.auth, req.params.slug, req.query.locale) }),
    );

    app.post(
      '/site-blocks/:slug/copy-to-locale',
      {
        config: { scope: 'site_blocks.create' },
        schema: {
          tags,
          operationId: 'copySiteBlockToLocale',
          summary: 'Copy into another locale: a draft with the same schema and data',
          description:
            'Body `{ locale }` (or `{ targetLocale }`). The slug is kept when free in the target locale, else suffixed; a page keeps its path (422 PATH_TAKEN when the target locale uses it). 409 when the group already has a member in that locale.',
          params: SlugParams,
          querystring: LocaleQuery,
          body: CopyToLocaleBody,
          response: { 200: One, 409: { $ref: 'Error#', description: 'The translation group already has a member in that locale' } },
        },
      },
      async (req) => ({ data: await service.copyToLocale(db, req.auth, req.params.slug, req.query.locale, req.body) }),
    );

    app.get(
      '/site-blocks/:slug/revisions',
      {
        config: { scope: 'site_blocks.view', managementOnly: true },
        schema: {
          tags,
          operationId: 'listSiteBlockRevisions',
          summary: 'Data revisions, newest first',
          description: 'Each `{ id, siteBlockId, action, changes: [{ field, from, to }], createdAt, author }`; `changes` hold only what changed.',
          params: SlugParams,
          querystring: RevisionQuery,
          response: { 200: Paginated(ref(SiteBlockRevision)) },
        },
      },
      async (req) => service.listRevisions(db, req.auth, req.params.slug, req.query),
    );

    app.post(
      '/site-blocks/:slug/revisions/:revisionId/restore',
      {
        config: { scope: 'site_blocks.update' },
        schema: {
          tags,
          operationId: 'restoreSiteBlockRevision',
          summary: 'Bring back the data as it was after a revision (a new revision; the status stays)',
          description: 'The restored data is validated against the current schema.',
          params: RevisionParams,
          querystring: LocaleQuery,
          response: { 200: One },
        },
      },
      async (req) => ({ data: await service.restoreRevision(db, req.auth, req.params.slug, req.query.locale, req.params.revisionId) }),
    );

    // Public twins (decisions G19, G20): published blocks only, with the site key, no token.
    app.get(
      '/public/site-blocks',
      {
        config: { scope: 'public', siteKey: true, deliveryCache: true },
        schema: {
          tags,
          operationId: 'getPublicSiteBlockByPath',
          summary: 'The published page block of a path, with the site key (ETag, 304)',
          description: '`?path=/about` (and `locale`), or `?path=/de/about`. Drafts are 404; with staged publishing, what was last published.',
          querystring: PublicPathQuery,
          response: { 200: One },
        },
      },
      async (req, reply) =>
        cacheable(req, reply, await service.getBlockByPath(db, req.publicSite.siteId, req.query.path, req.query.locale, 'published'), PUBLIC_MAX_AGE),
    );

    app.get(
      '/public/site-blocks/:slug',
      {
        config: { scope: 'public', siteKey: true, deliveryCache: true },
        schema: {
          tags,
          operationId: 'getPublicSiteBlock',
          summary: 'A published site block by slug, with the site key (ETag, 304)',
          params: SlugParams,
          querystring: PublicSlugQuery,
          response: { 200: One },
        },
      },
      async (req, reply) =>
        cacheable(req, reply, await service.getBlock(db, req.publicSite.siteId, req.params.slug, req.query.locale, 'published'), PUBLIC_MAX_AGE),
    );
  },
};
