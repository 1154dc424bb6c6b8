import type { AppModule } from '../types.js';
import { CopyToLocaleBody, Data, IdParams, Message, Paginated, TranslationStatus } from '../../shared/schemas.js';
import * as S from './categories.schemas.js';
import * as service from './categories.service.js';

const tags = ['Categories'];

export const categoriesModule: AppModule = {
  name: 'categories',
  routes(app, { db, dialect }) {
    app.addSchema(S.TreeNodeSchema);

    app.get(
      '/categories',
      {
        config: { scope: 'categories.view' },
        schema: {
          tags,
          operationId: 'listCategories',
          summary: 'List categories (flat)',
          querystring: S.CategoryListQuery,
          response: { 200: Paginated(S.Category) },
        },
      },
      async (req) => service.listCategories(db, dialect, req.auth.siteId, req.query),
    );

    app.post(
      '/categories',
      {
        config: { scope: 'categories.create' },
        schema: { tags, operationId: 'createCategory', summary: 'Create a category', body: S.CategoryCreate, response: { 201: Data(S.Category) } },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createCategory(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/categories/tree',
      {
        config: { scope: 'categories.view' },
        schema: { tags, operationId: 'getCategoryTree', summary: 'Categories as a nested tree', querystring: S.TreeQuery, response: { 200: S.TreeResponse } },
      },
      async (req) => ({ data: await service.categoryTree(db, req.auth.siteId, req.query.locale) }),
    );

    app.get(
      '/categories/:id',
      {
        config: { scope: 'categories.view' },
        schema: {
          tags,
          operationId: 'getCategory',
          summary: 'A category with its parent and a page of its contents',
          params: IdParams,
          querystring: S.CategoryDetailQuery,
          response: { 200: S.CategoryDetail },
        },
      },
      async (req) => service.getCategoryDetail(db, req.auth.siteId, req.params.id, req.query),
    );

    app.put(
      '/categories/:id',
      {
        config: { scope: 'categories.update' },
        schema: {
          tags,
          operationId: 'updateCategory',
          summary: 'Update a category (partial; the locale cannot change)',
          params: IdParams,
          body: S.CategoryUpdate,
          response: { 200: Data(S.Category) },
        },
      },
      async (req) => ({ data: await service.updateCategory(db, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/categories/:id',
      {
        config: { scope: 'categories.delete' },
        schema: {
          tags,
          operationId: 'deleteCategory',
          summary: 'Delete a category',
          description: "Children move to the deleted category's parent (or become roots); contents stay and lose the association.",
          params: IdParams,
          response: { 200: Message },
        },
      },
      async (req) => {
        await service.deleteCategory(db, req.auth.siteId, req.params.id);
        return { message: 'Category deleted.' };
      },
    );

    app.get(
      '/categories/:id/translations',
      {
        config: { scope: 'categories.view' },
        schema: {
          tags,
          operationId: 'getCategoryTranslations',
          summary: 'Translation status per enabled locale',
          params: IdParams,
          response: { 200: TranslationStatus },
        },
      },
      async (req) => ({ data: await service.categoryTranslations(db, req.auth.siteId, req.params.id) }),
    );

    app.post(
      '/categories/:id/copy-to-locale',
      {
        config: { scope: 'categories.create' },
        schema: {
          tags,
          operationId: 'copyCategoryToLocale',
          summary: 'Copy into another locale (same translation group)',
          description: 'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale.',
          params: IdParams,
          body: CopyToLocaleBody,
          response: { 200: Data(S.Category), 409: { $ref: 'ErrorBody#' } },
        },
      },
      async (req) => ({ data: await service.copyCategoryToLocale(db, req.auth.siteId, req.params.id, req.body) }),
    );
  },
};
