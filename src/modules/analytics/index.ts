import type { AppModule } from '../types.js';
import { trackerRoutes } from './tracker.routes.js';

/** Web analytics (issue 31): so far the tracker scripts; the collector and storage join here. */
export const analyticsModule: AppModule = {
  name: 'analytics',
  routes(app) {
    trackerRoutes(app);
  },
};
