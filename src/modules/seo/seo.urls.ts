import { parseJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import { siteCategories } from '../categories/category-paths.js';
import * as repo from './seo.repository.js';

/**
 * The one URL builder (decisions G18): every public URL of a record (sitemaps, llms.txt,
 * IndexNow, redirects on slug changes) is built here from the site's domain, the locale prefix,
 * `blogUrlMode`, `blogPrefix` and `contentPathPrefixes`.
 */
/**
 * The job a published content's URL change schedules, with `{ contentId, from, to }` (paths):
 * the redirects module records a 301 from the old URL when the site asks for it (decisions R11).
 */
export const URL_CHANGED_JOB = 'content.url_changed';

export interface UrlContext {
  domain: string;
  defaultLocale: string;
  hideDefaultLocale: boolean;
  blogUrlMode: 'flat' | 'nested';
  blogPrefix: string | null;
  contentPathPrefixes: Record<string, string>;
}

export interface ContentAddress {
  slug: string;
  locale: string;
  type: string;
  /** Slugs of the content's first category and its parents, root first (nested mode). */
  categoryPath?: readonly string[];
}

export async function loadUrlContext(db: Executor, siteId: string): Promise<UrlContext | null> {
  const row = await repo.urlContext(db, siteId);
  if (!row) return null;
  return {
    domain: row.domain,
    defaultLocale: row.default_locale,
    hideDefaultLocale: Boolean(row.hide_default_locale),
    blogUrlMode: row.blog_url_mode === 'nested' ? 'nested' : 'flat',
    // A site that never saved its SEO settings has the defaults: posts under /blog.
    blogPrefix: row.settings_id === null ? 'blog' : row.blog_prefix,
    contentPathPrefixes: parseJson<Record<string, string>>(row.content_path_prefixes, {}),
  };
}

const segment = (s: string) => encodeURIComponent(s);

/** `/de/blog/travel/lisbon` or `/blog/lisbon`: the locale prefix (lower case; none for the default locale when hidden), the type's prefix, the category path in nested mode, the slug. */
export function contentPath(ctx: UrlContext, content: ContentAddress): string {
  const parts: string[] = [];
  if (!(ctx.hideDefaultLocale && content.locale === ctx.defaultLocale)) parts.push(content.locale.toLowerCase());
  const prefix = ctx.contentPathPrefixes[content.type] ?? ctx.blogPrefix;
  if (prefix) parts.push(...prefix.split('/'));
  if (ctx.blogUrlMode === 'nested' && content.categoryPath?.length) parts.push(...content.categoryPath);
  parts.push(content.slug);
  return `/${parts.map(segment).join('/')}`;
}

/** `/de/about` or `/about`: a page site block's path behind the locale prefix (none for the default locale when hidden). */
export function pagePath(ctx: UrlContext, page: { locale: string; path: string }): string {
  if (ctx.hideDefaultLocale && page.locale === ctx.defaultLocale) return page.path;
  const prefix = `/${encodeURIComponent(page.locale.toLowerCase())}`;
  return page.path === '/' ? prefix : `${prefix}${page.path}`;
}

/** The absolute URL of a path on the site (https). */
export function absoluteUrl(ctx: Pick<UrlContext, 'domain'>, path: string): string {
  return `https://${ctx.domain}${path}`;
}

/**
 * The category path of each of a site's categories, root first (at most 10 levels), from one
 * read of its categories: `pathOf(id)` for nested URLs.
 */
export async function loadCategoryPaths(db: Executor, siteId: string): Promise<(categoryId: number) => string[]> {
  const byId = new Map((await siteCategories(db, siteId)).map((r) => [Number(r.id), r]));
  const cache = new Map<number, string[]>();
  return (id: number) => {
    const hit = cache.get(id);
    if (hit) return hit;
    const out: string[] = [];
    let cur = byId.get(id);
    for (let depth = 0; cur && depth < 10; depth++) {
      out.unshift(cur.slug);
      cur = cur.parent_id === null ? undefined : byId.get(Number(cur.parent_id));
    }
    cache.set(id, out);
    return out;
  };
}
