import { createHash } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import { parseJson } from '../../db/json.js';
import { AppError } from '../../shared/errors.js';
import { docToMarkdown } from '../../shared/richtext/to-markdown.js';
import type { RTNode } from '../../shared/richtext/types.js';
import { getSettings } from './seo.service.js';
import { absoluteUrl, contentPath, loadUrlContext, pagePath, type UrlContext } from './seo.urls.js';
import { pageMarkdown } from '../site-blocks/site-blocks.markdown.js';
import { publishedPage, publishedPages, publishedPagesVersion } from '../site-blocks/published-pages.js';
import * as repo from './llms.repository.js';
import { publishedBodies, publishedBySlug, publishedNewestFirst, publishedVersion } from '../contents/content-links.js';
import { siteCategories } from '../categories/category-paths.js';

/** Items listed with their description per section of llms.txt; older ones go under `## Optional`. */
export const SECTION_SIZE = 50;
/** Items under `## Optional` at most. */
export const OPTIONAL_MAX = 1000;
/** llms-full.txt stops after this many bytes of posts (decisions S9). */
export const FULL_MAX_BYTES = 8 * 1024 * 1024;

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const linkText = (s: string) => oneLine(s).replace(/[[\]\\]/g, (c) => `\\${c}`);

interface LlmsContext {
  name: string;
  description: string | null;
  urls: UrlContext;
}

/** The site's llms context, or 404 while `llmsTxtEnabled` is off (decisions S3). */
async function enabled(db: Executor, siteId: string): Promise<LlmsContext> {
  const [settings, urls, site] = await Promise.all([getSettings(db, siteId), loadUrlContext(db, siteId), repo.siteName(db, siteId)]);
  if (!settings.llmsTxtEnabled || !urls || !site) {
    throw new AppError('NOT_FOUND', { message: 'llms.txt is not enabled for this site (SEO setting llmsTxtEnabled).' });
  }
  return { name: site.name, description: settings.llmsSiteDescription, urls };
}

function header(ctx: LlmsContext): string {
  return `# ${oneLine(ctx.name)}\n\n${ctx.description ? `> ${oneLine(ctx.description)}\n\n` : ''}`;
}

const pageUrl = (urls: UrlContext, p: { locale: string; path: string }) => absoluteUrl(urls, pagePath(urls, p));

/**
 * llms.txt (llmstxt.org): the site name as H1, the `>` summary, then `## Pages` (the published
 * page site blocks, at most SECTION_SIZE, the rest under Optional), then one section per category
 * (a content's first category; `Posts` for the others) listing its newest SECTION_SIZE
 * published contents as `- [title](url): description`, then `## Optional` with the older ones.
 */
export async function llmsTxt(db: Executor, siteId: string): Promise<string> {
  const ctx = await enabled(db, siteId);
  const pages = (await publishedPages(db, siteId)).map((p) => `- [${linkText(p.name)}](${pageUrl(ctx.urls, p)})`);
  const categories = new Map((await siteCategories(db, siteId)).map((c) => [Number(c.id), c.name]));
  const sections = new Map<string, string[]>();
  const optional: string[] = [];
  const limit = 5000;
  for (let offset = 0; optional.length < OPTIONAL_MAX; offset += limit) {
    const rows = await publishedNewestFirst(db, siteId, limit, offset);
    for (const r of rows) {
      const url = absoluteUrl(ctx.urls, contentPath(ctx.urls, { slug: r.slug, locale: r.locale, type: r.type }));
      const section = (r.first_category_id !== null && categories.get(Number(r.first_category_id))) || 'Posts';
      const list = sections.get(section) ?? sections.set(section, []).get(section)!;
      const description = r.meta_description ?? r.excerpt;
      if (list.length < SECTION_SIZE) list.push(`- [${linkText(r.title)}](${url})${description ? `: ${oneLine(description)}` : ''}`);
      else if (optional.length < OPTIONAL_MAX) optional.push(`- [${linkText(r.title)}](${url})`);
    }
    if (rows.length < limit) break;
  }
  let out = header(ctx);
  if (pages.length) out += `## Pages\n\n${pages.slice(0, SECTION_SIZE).join('\n')}\n\n`;
  optional.unshift(...pages.slice(SECTION_SIZE));
  for (const name of [...sections.keys()].sort((a, b) => (a === 'Posts' ? 1 : b === 'Posts' ? -1 : a.localeCompare(b)))) {
    out += `## ${oneLine(name)}\n\n${sections.get(name)!.join('\n')}\n\n`;
  }
  if (optional.length) out += `## Optional\n\n${optional.join('\n')}\n`;
  return out;
}

function contentMarkdown(title: string, body: unknown): string {
  const doc = parseJson<RTNode | null>(body, null);
  const text = doc ? docToMarkdown(doc) : '';
  return `# ${oneLine(title)}\n\n${text}`;
}

/**
 * llms-full.txt, streamed: the header, the published pages as markdown (decisions S15), then
 * every published content oldest first as markdown with its URL, until FULL_MAX_BYTES; a note
 * says where it was cut. Memory stays flat: 50 bodies at a time, and the event loop gets a turn
 * between batches.
 */
export async function llmsFull(db: Executor, siteId: string, maxBytes = FULL_MAX_BYTES): Promise<AsyncIterable<string>> {
  const ctx = await enabled(db, siteId);
  return (async function* () {
    let bytes = 0;
    const head = header(ctx);
    bytes += Buffer.byteLength(head);
    yield head;
    const cut = `---\n\n[llms-full.txt stops here: it is capped at ${maxBytes} bytes. Every page is listed in llms.txt.]\n`;
    // A part, or null when it would pass the cap.
    const fits = (url: string, markdown: string) => {
      const part = `---\n\nURL: ${url}\n\n${markdown}\n`;
      const size = Buffer.byteLength(part);
      if (bytes + size > maxBytes) return null;
      bytes += size;
      return part;
    };
    for (const p of await publishedPages(db, siteId, true)) {
      const part = fits(pageUrl(ctx.urls, p), pageMarkdown(p));
      if (part === null) {
        yield cut;
        return;
      }
      yield part;
    }
    for (let after = 0; ; ) {
      const rows = await publishedBodies(db, siteId, after, 50);
      if (!rows.length) return;
      for (const r of rows) {
        const part = fits(absoluteUrl(ctx.urls, contentPath(ctx.urls, { slug: r.slug, locale: r.locale, type: r.type })), contentMarkdown(r.title, r.body));
        if (part === null) {
          yield cut;
          return;
        }
        yield part;
      }
      after = Number(rows[rows.length - 1]!.id);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  })();
}

/** A version of what llms-full.txt holds, for its ETag without building it. */
export async function llmsFullVersion(db: Executor, siteId: string): Promise<string> {
  const [row, pages, settings, site] = await Promise.all([
    publishedVersion(db, siteId),
    publishedPagesVersion(db, siteId),
    getSettings(db, siteId),
    repo.siteName(db, siteId),
  ]);
  return createHash('sha256')
    .update(JSON.stringify([row, pages, settings.updatedAt, site?.name, FULL_MAX_BYTES]))
    .digest('base64url')
    .slice(0, 27);
}

/** One published content as markdown (`?locale=`, else the site's default locale). */
export async function contentAsMarkdown(db: Executor, siteId: string, slug: string, locale?: string): Promise<string> {
  const ctx = await enabled(db, siteId);
  const row = await publishedBySlug(db, siteId, slug, locale ?? ctx.urls.defaultLocale);
  if (!row) throw new AppError('NOT_FOUND', { message: 'No published content has this slug.' });
  return contentMarkdown(row.title, row.body);
}

/** One published page site block as markdown (decisions S15; `?locale=`, else the site's default locale). */
export async function pageAsMarkdown(db: Executor, siteId: string, slug: string, locale?: string): Promise<string> {
  const ctx = await enabled(db, siteId);
  const row = await publishedPage(db, siteId, slug, locale ?? ctx.urls.defaultLocale);
  if (!row) throw new AppError('NOT_FOUND', { message: 'No published page has this slug.' });
  return pageMarkdown(row);
}
