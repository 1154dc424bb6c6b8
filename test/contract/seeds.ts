import type { Client } from '../helpers/http.js';
import { tagSeeds } from './seeds/tags.js';
import { variableSeeds } from './seeds/variables.js';
import { categorySeeds } from './seeds/categories.js';
import { contentSeeds } from './seeds/contents.js';
import { singleTypeSeeds } from './seeds/single-types.js';
import { webhookSeeds } from './seeds/webhooks.js';
import { redirectSeeds } from './seeds/redirects.js';
import { sitemapSeeds } from './seeds/sitemap.js';
import { llmsSeeds } from './seeds/llms.js';
import { siteBlockSeeds } from './seeds/site-blocks.js';
import { formSeeds } from './seeds/forms.js';
import { mediaFolderSeeds } from './seeds/media-folders.js';
import { mediaSeeds } from './seeds/media.js';
import { userSeeds } from './seeds/users.js';
import { analyticsSeeds } from './seeds/analytics.js';
import { siteExportSeeds } from './seeds/site-export.js';

/**
 * How the contract tests make a record on another site for every route with a path parameter.
 * Keyed by the route's path with its parameters (e.g. `/v1/categories/:id`); a seed creates the
 * record through the API with that site's client and returns the path parameters, and, for
 * routes that take a body, a valid body so that the 404 is about the record, not the input.
 * The contract test fails for a parameterised route that has no seed here.
 */
export interface Seeded {
  params: Record<string, string | number>;
  body?: unknown;
}
export type Seed = (api: Client, route: { method: string; url: string }) => Promise<Seeded>;

export const SEEDS: Record<string, Seed> = {
  ...tagSeeds,
  ...variableSeeds,
  ...categorySeeds,
  ...contentSeeds,
  ...singleTypeSeeds,
  ...webhookSeeds,
  ...redirectSeeds,
  ...sitemapSeeds,
  ...llmsSeeds,
  ...siteBlockSeeds,
  ...formSeeds,
  ...mediaFolderSeeds,
  ...mediaSeeds,
  ...userSeeds,
  ...analyticsSeeds,
  ...siteExportSeeds,
};

export function seedFor(url: string): Seed | undefined {
  if (SEEDS[url]) return SEEDS[url];
  // Fall back on the longest registered prefix (e.g. /v1/categories/:id for /v1/categories/:id/translations).
  const prefixes = Object.keys(SEEDS)
    .filter((p) => url.startsWith(`${p}/`))
    .sort((a, b) => b.length - a.length);
  return prefixes[0] ? SEEDS[prefixes[0]] : undefined;
}

export function fillPath(url: string, params: Record<string, string | number>): string {
  return url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`seed for ${url} gave no :${name}`);
    return encodeURIComponent(String(params[name]));
  });
}
