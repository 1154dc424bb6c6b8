import type { AppModule } from '../types.js';
import { singleTypes } from './single-types.resource.js';

export const singleTypesModule: AppModule = {
  name: 'single-types',
  routes(app, { db }) {
    const r = singleTypes.routes(db);
    for (const route of [r.list, r.create, r.get, r.update, r.delete]) app.route(route);
  },
};
