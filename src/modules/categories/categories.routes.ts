import { IdParams, ref } from '../../shared/schemas.js';
import { visibilityOf } from '../contents/content-links.js';
import type { AppModule } from '../types.js';
import { CategoryDetail, CategoryDetailQuery, categories, categoryDetail, categoryTree, TreeQuery, TreeResponse } from './categories.resource.js';

const tags = ['Categories'];

export const categoriesModule: AppModule = {
  name: 'categories',
  routes(app, { db }) {
    const r = categories.routes(db);
    app.route(r.list);
    app.route(r.create);
    app.get(
      '/categories/tree',
      {
        config: { scope: 'categories.view' },
        schema: { tags, operationId: 'getCategoryTree', summary: 'Categories as a nested tree', querystring: TreeQuery, response: { 200: TreeResponse } },
      },
      async (req) => ({ data: await categoryTree(db, req.auth.siteId, req.query.locale) }),
    );
    app.get(
      '/categories/:id',
      {
        config: { scope: 'categories.view' },
        schema: {
          tags,
          operationId: 'getCategory',
          summary: 'A category with its parent and a page of its contents (those the token may see)',
          params: IdParams,
          querystring: CategoryDetailQuery,
          response: { 200: ref(CategoryDetail) },
        },
      },
      async (req) => categoryDetail(db, req.auth.siteId, req.params.id, req.query, visibilityOf(req.auth)),
    );
    for (const route of [r.update, r.delete, r.translations, r.copyToLocale]) app.route(route);
  },
};
