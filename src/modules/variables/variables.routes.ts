import type { AppModule } from '../types.js';
import { variables } from './variables.resource.js';

export const variablesModule: AppModule = {
  name: 'variables',
  routes(app, { db }) {
    const r = variables.routes(db);
    for (const route of [r.list, r.create, r.get, r.update, r.delete, r.translations, r.copyToLocale]) app.route(route);
  },
};
