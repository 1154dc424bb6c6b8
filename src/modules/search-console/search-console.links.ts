import type { Executor } from '../../db/types.js';
import { replaceLinks } from './search-console.repository.js';

/**
 * The links a content body or a page block's data makes (decisions SC4): `href` attributes of
 * rich text, and JSON string values that are absolute http(s) URLs (URL fields). A path or a URL
 * on the site's domain is internal, normalised to `https://<domain><path>`; anything else is
 * external. Fragments are dropped; the site's own file URLs (images, downloads) are not links.
 * Kept on write, in the writer's transaction, as media references are (M15).
 */
export function linksIn(text: string | null | undefined, domain: string): Array<{ url: string; internal: boolean }> {
  if (!text) return [];
  const found = new Map<string, boolean>();
  const candidates = [
    ...[...text.matchAll(/href\s*=\s*\\?["']([^"'\\]+)\\?["']/gi)].map((m) => m[1]!),
    ...[...text.matchAll(/"(https?:\/\/[^"\\\s]+)"/gi)].map((m) => m[1]!),
  ];
  for (const raw of candidates) {
    const href = raw.replace(/&amp;/g, '&').trim();
    let url: URL;
    try {
      url = href.startsWith('/') && !href.startsWith('//') ? new URL(href, `https://${domain}`) : new URL(href);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    if (url.pathname.startsWith('/files/')) continue;
    url.hash = '';
    const internal = url.hostname === domain || url.hostname === `www.${domain}`;
    if (internal) {
      url.protocol = 'https:';
      url.hostname = domain;
    }
    found.set(url.toString(), internal);
  }
  return [...found].map(([url, internal]) => ({ url, internal }));
}

/**
 * Replaces the links a content's body (or a site block's data) makes. `known`: what the caller
 * already read or knows, to spare a create its statements (issue 37): the site's domain, and
 * `fresh` for a source inserted in this transaction (it has no links to delete).
 */
export async function setOutboundLinks(
  db: Executor,
  siteId: string,
  source: { contentId: number } | { siteBlockId: number },
  text: string | null,
  known: { domain?: string; fresh?: boolean } = {},
) {
  const domain = known.domain ?? (await db.selectFrom('sites').select('domain').where('id', '=', siteId).executeTakeFirst())?.domain ?? '';
  const links = linksIn(text, domain);
  await replaceLinks(db, siteId, 'contentId' in source ? { content_id: source.contentId } : { site_block_id: source.siteBlockId }, links, known.fresh);
}
