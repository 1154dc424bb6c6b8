import { ALL_SCOPES, type Scope } from '../../shared/scopes.js';

/** The areas an editor works in, every action (design consent-search-users.md section 3). */
const EDITOR_AREAS = new Set(['contents', 'media', 'categories', 'tags', 'single_types', 'site_blocks', 'variables', 'forms', 'seo', 'sitemap', 'redirects']);

const AUTHOR: readonly Scope[] = [
  'contents.view',
  'contents.create',
  'contents.update.own',
  'contents.delete.own',
  'contents.publish.own',
  'media.view',
  'media.upload',
  'categories.view',
  'tags.view',
  'site_blocks.view',
];

export interface RoleSeed {
  slug: string;
  name: string;
  description: string;
  system: boolean;
  scopes: readonly Scope[];
}

/**
 * The roles every new site starts with (decisions U1, after Ghost's staff roles). Migration 0026
 * seeds existing sites with the same lists, frozen as the catalog stood then.
 */
export const ROLE_SEEDS: readonly RoleSeed[] = [
  { slug: 'owner', name: 'Owner', system: true, scopes: ALL_SCOPES, description: 'Every scope; cannot be changed or deleted.' },
  {
    slug: 'administrator',
    name: 'Administrator',
    system: false,
    scopes: ALL_SCOPES.filter((s) => s !== 'sites.delete'),
    description: 'Every scope but deleting the site.',
  },
  {
    slug: 'editor',
    name: 'Editor',
    system: false,
    scopes: ALL_SCOPES.filter((s) => EDITOR_AREAS.has(s.split('.')[0]!)),
    description: 'Contents, media, forms, SEO, sitemap and redirects: every action.',
  },
  { slug: 'author', name: 'Author', system: false, scopes: AUTHOR, description: 'Writes and publishes their own contents; reads what they need.' },
  { slug: 'viewer', name: 'Viewer', system: false, scopes: ALL_SCOPES.filter((s) => s.endsWith('.view')), description: 'Reads everything, changes nothing.' },
];

/** The role a user gets when none is named (decisions U2). */
export const DEFAULT_ROLE_SLUG = 'author';
export const OWNER_ROLE_SLUG = 'owner';
