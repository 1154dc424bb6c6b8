import type { AppModule } from '../types.js';
import { tags } from './tags.resource.js';

export const tagsModule: AppModule = {
  name: 'tags',
  routes(app, { db }) {
    const r = tags.routes(db);
    for (const route of [r.list, r.create, r.get, r.update, r.delete, r.translations, r.copyToLocale]) app.route(route);
  },
};
