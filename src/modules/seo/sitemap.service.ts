import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/types.js';
import { now } from '../../db/json.js';
import type { ApiOf } from '../../kit/fields.js';
import type { ImportRow } from '../../kit/import.js';
import { tableRepository } from '../../kit/repository.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { getSettings } from './seo.service.js';
import { absoluteUrl, contentPath, loadCategoryPaths, loadUrlContext, pagePath, type UrlContext } from './seo.urls.js';
import { publishedPages } from '../site-blocks/published-pages.js';
import { publishedAddresses, publishedLinkSlugs } from '../contents/content-links.js';
import * as repo from './sitemap.repository.js';
import { entryFields, ruleFields, sourceFields, urlHash } from './sitemap.resource.js';

export type SitemapEntry = ApiOf<typeof entryFields.fields>;
type Row = Record<string, any>;
export type EntryInput = { url: string; isExternal?: boolean; priority?: number; changefreq?: string; lastModified?: string | null; title?: string | null };

const entries = tableRepository('sitemap_entries');
const toApi = (r: Row) => entryFields.toApi(r);

// ---- custom entries (decisions S1, S7): create, update and delete are the kit's (sitemap.resource.ts) ----

/** Every custom entry, oldest first, for the CSV export. */
export async function listAllForExport(db: Db, siteId: string): Promise<SitemapEntry[]> {
  return (await repo.allEntries(db, siteId)).map(toApi);
}

export const MAX_IMPORT_ROWS = 10_000;
export const MAX_IMPORT_ERRORS = 1000;

/** Rows checked one by one (numbered from 1); a URL the sitemap (or an earlier row) has is skipped; the rest stored in one transaction. */
export async function importEntries(db: Db, siteId: string, rows: ImportRow<EntryInput>[]) {
  if (rows.length > MAX_IMPORT_ROWS) throw invalid('VALIDATION_FAILED', 'entries', `An import holds at most ${MAX_IMPORT_ROWS} rows; split the file.`);
  const result = { imported: 0, skipped: 0, errors: [] as Array<{ row: number; field?: string; message: string }>, errorCount: 0 };
  await db.transaction().execute(async (tx) => {
    const good = rows.filter((r): r is { row: number; input: EntryInput } => 'input' in r);
    const taken = await entries.takenValues(
      tx,
      siteId,
      'url_hash',
      good.map((r) => urlHash(r.input.url)),
    );
    const at = now();
    const insert: Row[] = [];
    for (const r of rows) {
      if ('error' in r) {
        result.errorCount += 1;
        if (result.errors.length < MAX_IMPORT_ERRORS) result.errors.push({ row: r.row, ...r.error });
        continue;
      }
      const hash = urlHash(r.input.url);
      if (taken.has(hash)) {
        result.skipped += 1;
        continue;
      }
      taken.add(hash);
      insert.push({ ...entryFields.insertRow(r.input), id: randomUUID(), site_id: siteId, url_hash: hash, created_at: at, updated_at: at });
    }
    for (let i = 0; i < insert.length; i += 200) await repo.insertEntries(tx, insert.slice(i, i + 200) as never);
    result.imported = insert.length;
  });
  return result;
}

// ---- rules and sources (decisions S1, S10, S11): their writes are the kit's (sitemap.resource.ts) ----

export type SitemapRule = ApiOf<typeof ruleFields.fields>;
export type SitemapSource = ApiOf<typeof sourceFields.fields>;

/** Every rule in the order they are tried. */
export async function listRules(db: Db, siteId: string): Promise<SitemapRule[]> {
  return (await repo.orderedRules(db, siteId, false)).map((r) => ruleFields.toApi(r));
}

export async function listSources(db: Db, siteId: string): Promise<SitemapSource[]> {
  return (await repo.allSources(db, siteId, false)).map((r) => sourceFields.toApi(r));
}

/** A path pattern as an anchored regular expression: `*` any characters, `?` one, the rest literal. */
function patternRegex(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
}

type RuleFor = Awaited<ReturnType<typeof ruleMatcher>>;

/** A translated URL's alternates: every published member (itself included), then `x-default` for the default locale's. */
function withAlternates(entry: SitemapUrl, members: ReadonlyArray<{ locale: string; loc: string }>, defaultLocale: string): SitemapUrl {
  if (members.length < 2) return entry;
  entry.alternates = [...members].sort((a, b) => a.locale.localeCompare(b.locale)).map((m) => ({ hreflang: m.locale, href: m.loc }));
  const fallback = members.find((m) => m.locale === defaultLocale);
  if (fallback) entry.alternates.push({ hreflang: 'x-default', href: fallback.loc });
  return entry;
}

/**
 * Published page site blocks (G18: the locale prefix, then the page's path), with their
 * translations as alternates like contents; path-pattern rules apply to them, else the default
 * priority and change frequency. `lastmod`: the last publish under staged publishing (edits
 * are not live until then), else the last change.
 */
async function pageUrls(db: Executor, siteId: string, urls: UrlContext, settings: { defaultPriority: number; defaultChangefreq: string }, ruleFor: RuleFor) {
  const pages = await publishedPages(db, siteId);
  const groups = new Map<string, Array<{ locale: string; loc: string }>>();
  const items = pages.map((p) => {
    const path = pagePath(urls, p);
    const loc = absoluteUrl(urls, path);
    (groups.get(p.translation_group) ?? groups.set(p.translation_group, []).get(p.translation_group)!).push({ locale: p.locale, loc });
    const rule = ruleFor?.({ id: 0, type: '', path, page: true });
    return { p, loc, rule };
  });
  return items.map(({ p, loc, rule }): SitemapUrl => {
    const entry: SitemapUrl = {
      loc,
      lastmod: p.published_snapshot ? p.published_at : p.updated_at,
      changefreq: rule?.changefreq ?? settings.defaultChangefreq,
      priority: rule ? Number(rule.priority) : settings.defaultPriority,
      source: 'site-block',
    };
    return withAlternates(entry, groups.get(p.translation_group)!, urls.defaultLocale);
  });
}

/** The first active rule (by ruleOrder, then id) matching each content sets its priority and change frequency; pages match path patterns only. */
async function ruleMatcher(db: Executor, siteId: string) {
  const active = await repo.orderedRules(db, siteId, true);
  if (!active.length) return null;
  const slugsOf = async (kind: 'category' | 'tag') => {
    const map = new Map<number, Set<string>>();
    if (!active.some((r) => r.source_type === kind)) return map;
    for (const l of await publishedLinkSlugs(db, siteId, kind)) {
      const set = map.get(Number(l.content_id)) ?? map.set(Number(l.content_id), new Set()).get(Number(l.content_id))!;
      set.add(l.slug);
    }
    return map;
  };
  const [categories, tags] = await Promise.all([slugsOf('category'), slugsOf('tag')]);
  const compiled = active.map((r) => ({ ...r, regex: r.source_type === 'path_pattern' ? patternRegex(r.source_value) : null }));
  return (content: { id: number; type: string; path: string; page?: boolean }) =>
    compiled.find((r) =>
      content.page
        ? r.source_type === 'path_pattern' && r.regex!.test(content.path)
        : r.source_type === 'content_type'
          ? r.source_value === content.type
          : r.source_type === 'category'
            ? categories.get(content.id)?.has(r.source_value)
            : r.source_type === 'tag'
              ? tags.get(content.id)?.has(r.source_value)
              : r.regex!.test(content.path),
    );
}

// ---- the sitemap itself (decisions S1, G18, G20) ----

export interface SitemapUrl {
  loc: string;
  lastmod: string | null;
  changefreq: string;
  priority: number;
  source: 'content' | 'site-block' | 'custom';
  /** hreflang -> URL, the URL itself included, `x-default` for the default locale's member. */
  alternates?: Array<{ hreflang: string; href: string }>;
}

/** URLs per sitemap file (the protocol's limit). */
export const URLS_PER_FILE = 50_000;

/**
 * Every URL of the site's sitemap: published contents (when `includeContentsInSitemap`) with
 * their translations as alternates (published members only, reciprocal, `x-default` for the
 * default locale's), then the custom entries. Priorities: `contentTypePriorities[type]` or
 * `defaultPriority`; change frequency `defaultChangefreq`; `lastmod` the content's last change.
 */
export async function sitemapUrls(db: Executor, siteId: string): Promise<SitemapUrl[]> {
  return (await loadSitemap(db, siteId)).list;
}

/** The sitemap's URLs with the settings and URL context they were built with (read once). */
async function loadSitemap(db: Executor, siteId: string) {
  const [settings, urls] = await Promise.all([getSettings(db, siteId), loadUrlContext(db, siteId)]);
  if (!urls) throw notFound('site');
  const out: SitemapUrl[] = [];
  const ruleFor = await ruleMatcher(db, siteId);
  if (settings.includeContentsInSitemap) {
    const pathOf = urls.blogUrlMode === 'nested' ? await loadCategoryPaths(db, siteId) : null;
    const groups = new Map<string, Array<{ locale: string; loc: string }>>();
    const items: Array<{ loc: string; lastmod: string; type: string; group: string; rule: { priority: number; changefreq: string } | undefined }> = [];
    for (let after = 0; ; ) {
      const rows = await publishedAddresses(db, siteId, after, 5000);
      if (!rows.length) break;
      for (const r of rows) {
        const category = r.first_category_id === null || r.first_category_id === undefined ? null : Number(r.first_category_id);
        const path = contentPath(urls, { slug: r.slug, locale: r.locale, type: r.type, categoryPath: pathOf && category ? pathOf(category) : [] });
        const loc = absoluteUrl(urls, path);
        const rule = ruleFor?.({ id: Number(r.id), type: r.type, path });
        items.push({
          loc,
          lastmod: r.updated_at,
          type: r.type,
          group: r.translation_group,
          rule: rule && { priority: Number(rule.priority), changefreq: rule.changefreq },
        });
        const members = groups.get(r.translation_group) ?? groups.set(r.translation_group, []).get(r.translation_group)!;
        members.push({ locale: r.locale, loc });
      }
      after = Number(rows[rows.length - 1]!.id);
    }
    for (const item of items) {
      const members = groups.get(item.group)!;
      const entry: SitemapUrl = {
        loc: item.loc,
        lastmod: item.lastmod,
        changefreq: item.rule?.changefreq ?? settings.defaultChangefreq,
        priority: item.rule?.priority ?? settings.contentTypePriorities[item.type] ?? settings.defaultPriority,
        source: 'content',
      };
      out.push(withAlternates(entry, members, urls.defaultLocale));
    }
  }
  out.push(...(await pageUrls(db, siteId, urls, settings, ruleFor)));
  for (const e of await repo.allEntries(db, siteId)) {
    out.push({
      loc: e.url.startsWith('/') ? absoluteUrl(urls, e.url) : e.url,
      lastmod: e.last_modified,
      changefreq: e.changefreq,
      priority: Number(e.priority),
      source: 'custom',
    });
  }
  return { list: out, settings, urls };
}

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
const formatPriority = (p: number) => (Math.round(p * 10) / 10).toFixed(1);

/** A `urlset` file (sitemaps.org 0.9, with `xhtml:link` alternates after the protocol's own elements, as its XSD allows). */
export function urlsetXml(urls: readonly SitemapUrl[]): string {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">\n',
  ];
  for (const u of urls) {
    let item = `<url><loc>${escapeXml(u.loc)}</loc>`;
    if (u.lastmod) item += `<lastmod>${escapeXml(u.lastmod)}</lastmod>`;
    item += `<changefreq>${u.changefreq}</changefreq><priority>${formatPriority(u.priority)}</priority>`;
    for (const a of u.alternates ?? []) item += `<xhtml:link rel="alternate" hreflang="${escapeXml(a.hreflang)}" href="${escapeXml(a.href)}"/>`;
    parts.push(`${item}</url>\n`);
  }
  parts.push('</urlset>\n');
  return parts.join('');
}

/** A `sitemapindex` naming each part at the site's root (`/sitemap-1.xml`, ...), with the newest lastmod of each, then the active sources. */
export function sitemapIndexXml(ctx: Pick<UrlContext, 'domain'>, urls: readonly SitemapUrl[], others: readonly string[] = []): string {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'];
  for (let n = 1; (n - 1) * URLS_PER_FILE < Math.max(urls.length, 1); n++) {
    const slice = urls.slice((n - 1) * URLS_PER_FILE, n * URLS_PER_FILE);
    const lastmod = slice.reduce<string | null>((m, u) => (u.lastmod && (!m || u.lastmod > m) ? u.lastmod : m), null);
    parts.push(`<sitemap><loc>${escapeXml(absoluteUrl(ctx, `/sitemap-${n}.xml`))}</loc>${lastmod ? `<lastmod>${lastmod}</lastmod>` : ''}</sitemap>\n`);
  }
  for (const url of others) parts.push(`<sitemap><loc>${escapeXml(url)}</loc></sitemap>\n`);
  parts.push('</sitemapindex>\n');
  return parts.join('');
}

/** sitemap.xml: a urlset, or an index when there are more than URLS_PER_FILE URLs, active sources, or the site asks for one. */
export async function sitemapXml(db: Executor, siteId: string): Promise<string> {
  const [{ list, settings, urls }, others] = await Promise.all([loadSitemap(db, siteId), repo.allSources(db, siteId, true)]);
  return list.length > URLS_PER_FILE || settings.sitemapIndexEnabled || others.length
    ? sitemapIndexXml(
        urls,
        list,
        others.map((o) => o.url),
      )
    : urlsetXml(list);
}

/** Part `n` (from 1) of an index; 404 past the last. */
export async function sitemapPartXml(db: Executor, siteId: string, n: number): Promise<string> {
  const urls = await sitemapUrls(db, siteId);
  const slice = urls.slice((n - 1) * URLS_PER_FILE, n * URLS_PER_FILE);
  if (n < 1 || (!slice.length && n !== 1)) throw new AppError('NOT_FOUND', { message: 'The sitemap has no such part.' });
  return urlsetXml(slice);
}
