import type { AppModule } from '../types.js';
import { Data, Message, Paginated, ref } from '../../shared/schemas.js';
import {
  SingleType,
  SingleTypeCreate,
  SingleTypeSummary,
  SingleTypeListQuery,
  SingleTypeLocaleQuery,
  SingleTypeParams,
  SingleTypeUpdate,
} from './single-types.schemas.js';
import * as service from './single-types.service.js';

const tags = ['Single types'];

export const singleTypesModule: AppModule = {
  name: 'single-types',
  routes(app, { db }) {
    app.get(
      '/single-types',
      {
        config: { scope: 'single_types.view' },
        schema: {
          tags,
          operationId: 'listSingleTypes',
          summary: 'List single types',
          querystring: SingleTypeListQuery,
          response: { 200: Paginated(ref(SingleTypeSummary)) },
        },
      },
      async (req) => service.listSingleTypes(db, req.auth.siteId, req.query),
    );

    app.post(
      '/single-types',
      {
        config: { scope: 'single_types.create' },
        schema: {
          tags,
          operationId: 'createSingleType',
          summary: 'Create a single type',
          description:
            '`data` is required unless `body` or `bodyMarkdown` is given. The body is stored as document JSON and rendered to sanitized `bodyHtml` on save.',
          body: SingleTypeCreate,
          response: { 201: Data(ref(SingleType)) },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createSingleType(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/single-types/:slug',
      {
        config: { scope: 'single_types.view' },
        schema: {
          tags,
          operationId: 'getSingleType',
          summary: "Get a single type by slug, in the given locale (default: the site's default locale)",
          params: SingleTypeParams,
          querystring: SingleTypeLocaleQuery,
          response: { 200: Data(ref(SingleType)) },
        },
      },
      async (req) => ({ data: await service.getSingleType(db, req.auth.siteId, req.params.slug, req.query.locale) }),
    );

    app.put(
      '/single-types/:slug',
      {
        config: { scope: 'single_types.update' },
        schema: {
          tags,
          operationId: 'updateSingleType',
          summary: 'Update a single type (partial; the slug is permanent)',
          description:
            'A `slug` that differs from the current one is a 422. `meta` is merged. When `schema` or `data` changes, the resulting data is validated against the resulting schema; `schema: null` removes it.',
          params: SingleTypeParams,
          querystring: SingleTypeLocaleQuery,
          body: SingleTypeUpdate,
          response: { 200: Data(ref(SingleType)) },
        },
      },
      async (req) => ({ data: await service.updateSingleType(db, req.auth.siteId, req.params.slug, req.query.locale, req.body) }),
    );

    app.delete(
      '/single-types/:slug',
      {
        config: { scope: 'single_types.delete' },
        schema: {
          tags,
          operationId: 'deleteSingleType',
          summary: 'Delete a single type in the given locale',
          params: SingleTypeParams,
          querystring: SingleTypeLocaleQuery,
          response: { 200: Message },
        },
      },
      async (req) => {
        await service.deleteSingleType(db, req.auth.siteId, req.params.slug, req.query.locale);
        return { message: 'Single type deleted.' };
      },
    );
  },
};
