import { EVENT_TYPES } from '../jobs/outbox.js';
import type { AnyModule, EventDescription, EventDescriptions } from './types.js';
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
import { siteBlocksModule } from './site-blocks/site-blocks.routes.js';
import { formsModule } from './forms/forms.routes.js';
import { spamModule } from './spam/spam.routes.js';
import { mediaFoldersModule } from './media-folders/media-folders.routes.js';
import { mediaModule } from './media/media.routes.js';
import { apiTokensModule } from './api-tokens/api-tokens.routes.js';
import { usersModule } from './users/users.routes.js';
import { rolesModule } from './roles/roles.routes.js';
import { cookieConsentModule } from './cookie-consent/cookie-consent.routes.js';
import { searchConsoleModule } from './search-console/search-console.routes.js';
import { analyticsModule } from './analytics/analytics.routes.js';
import { analyticsReportsModule } from './analytics/analytics.reports.routes.js';
import { bundlesModule } from './bundles/bundles.routes.js';

/** Every module and so every endpoint, in one explicit list (no folder autoloading). */
export const MODULES: readonly AnyModule[] = [
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
  siteBlocksModule,
  formsModule,
  spamModule,
  mediaFoldersModule,
  mediaModule,
  apiTokensModule,
  usersModule,
  rolesModule,
  cookieConsentModule,
  searchConsoleModule,
  analyticsModule,
  analyticsReportsModule,
  bundlesModule,
];

/**
 * The events of the given modules, each described by exactly one: start-up fails on an event
 * described twice or by none, as it fails on a route without a scope.
 */
export function describedEvents(modules: readonly AnyModule[]): EventDescriptions {
  const found = new Map<string, { module: string; description: EventDescription }>();
  for (const mod of modules) {
    for (const [type, description] of Object.entries(mod.events ?? {})) {
      const earlier = found.get(type);
      if (earlier) throw new Error(`The event ${type} is described by the modules ${earlier.module} and ${mod.name}`);
      found.set(type, { module: mod.name, description });
    }
  }
  const missing = EVENT_TYPES.filter((type) => !found.has(type));
  if (missing.length) throw new Error(`No module describes the events ${missing.join(', ')}`);
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, found.get(type)!.description])) as EventDescriptions;
}
