import type { AppModule } from './types.js';
import { sitesModule } from './sites/sites.routes.js';
import { notificationsModule } from './notifications/notifications.routes.js';
import { tagsModule } from './tags/tags.routes.js';
import { variablesModule } from './variables/variables.routes.js';
import { categoriesModule } from './categories/categories.routes.js';
import { singleTypesModule } from './single-types/single-types.routes.js';
import { contentsModule } from './contents/contents.routes.js';
import { webhooksModule } from './webhooks/webhooks.routes.js';
import { redirectsModule } from './redirects/redirects.routes.js';
import { seoModule } from './seo/seo.routes.js';
import { sitemapModule } from './sitemap/sitemap.routes.js';
import { llmsModule } from './llms/llms.routes.js';
import { siteBlocksModule } from './site-blocks/site-blocks.routes.js';
import { formsModule } from './forms/forms.routes.js';
import { spamModule } from './spam/spam.routes.js';
import { mediaFoldersModule } from './media-folders/media-folders.routes.js';
import { mediaModule } from './media/media.routes.js';
import { analyticsModule } from './analytics/analytics.routes.js';

/** Every module and so every endpoint, in one explicit list (no folder autoloading). */
export const MODULES: readonly AppModule[] = [
  sitesModule,
  notificationsModule,
  categoriesModule,
  tagsModule,
  variablesModule,
  singleTypesModule,
  contentsModule,
  webhooksModule,
  redirectsModule,
  seoModule,
  sitemapModule,
  llmsModule,
  siteBlocksModule,
  formsModule,
  spamModule,
  mediaFoldersModule,
  mediaModule,
  analyticsModule,
];
