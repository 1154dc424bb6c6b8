import type { AppModule } from '../types.js';
import { CopyToLocaleBody, Data, IdParams, Message, Paginated, TranslationStatus } from '../../shared/schemas.js';
import { Tag, TagCreate, TagListQuery, TagUpdate } from './tags.schemas.js';
import * as service from './tags.service.js';

const tags = ['Tags'];

export const tagsModule: AppModule = {
  name: 'tags',
  routes(app, { db, dialect }) {
    app.get(
      '/tags',
      {
        config: { scope: 'tags.view' },
        schema: { tags, operationId: 'listTags', summary: 'List tags with contentCount', querystring: TagListQuery, response: { 200: Paginated(Tag) } },
      },
      async (req) => service.listTags(db, dialect, req.auth.siteId, req.query),
    );

    app.post(
      '/tags',
      {
        config: { scope: 'tags.create' },
        schema: { tags, operationId: 'createTag', summary: 'Create a tag', body: TagCreate, response: { 201: Data(Tag) } },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createTag(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/tags/:id',
      {
        config: { scope: 'tags.view' },
        schema: { tags, operationId: 'getTag', summary: 'Get a tag', params: IdParams, response: { 200: Data(Tag) } },
      },
      async (req) => ({ data: await service.getTag(db, req.auth.siteId, req.params.id) }),
    );

    app.put(
      '/tags/:id',
      {
        config: { scope: 'tags.update' },
        schema: { tags, operationId: 'updateTag', summary: 'Update a tag (partial)', params: IdParams, body: TagUpdate, response: { 200: Data(Tag) } },
      },
      async (req) => ({ data: await service.updateTag(db, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/tags/:id',
      {
        config: { scope: 'tags.delete' },
        schema: { tags, operationId: 'deleteTag', summary: 'Delete a tag; contents lose the association', params: IdParams, response: { 200: Message } },
      },
      async (req) => {
        await service.deleteTag(db, req.auth.siteId, req.params.id);
        return { message: 'Tag deleted.' };
      },
    );

    app.get(
      '/tags/:id/translations',
      {
        config: { scope: 'tags.view' },
        schema: {
          tags,
          operationId: 'getTagTranslations',
          summary: 'Translation status per enabled locale',
          params: IdParams,
          response: { 200: TranslationStatus },
        },
      },
      async (req) => ({ data: await service.tagTranslations(db, req.auth.siteId, req.params.id) }),
    );

    app.post(
      '/tags/:id/copy-to-locale',
      {
        config: { scope: 'tags.create' },
        schema: {
          tags,
          operationId: 'copyTagToLocale',
          summary: 'Copy into another locale (same translation group)',
          description: 'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale.',
          params: IdParams,
          body: CopyToLocaleBody,
          response: { 200: Data(Tag), 409: { $ref: 'ErrorBody#' } },
        },
      },
      async (req) => ({ data: await service.copyTagToLocale(db, req.auth.siteId, req.params.id, req.body) }),
    );
  },
};
