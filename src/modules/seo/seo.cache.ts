import { sql } from 'kysely';
import type { Executor } from '../../db/types.js';
import { etagOf } from '../../shared/http-cache.js';

/**
 * A generated output and its strong ETag, computed once per build. The body is kept encoded:
 * writing a string to the socket encodes it again on every request (a 20 MB sitemap, each time).
 */
export interface CachedOutput {
  body: Buffer;
  etag: string;
}

interface Entry extends CachedOutput {
  version: string;
  bytes: number;
}

/**
 * What a site's generated outputs depend on, as one short text: the count and last change of
 * its contents, categories, tags, site blocks, custom entries, rules and sources, and the last change of its
 * settings and of the site. Any write that could change an output changes it (a deletion
 * changes a count, an edit a last change). One statement of small indexed aggregates.
 */
async function siteVersion(db: Executor, siteId: string): Promise<string> {
  const part = (table: string) =>
    sql<string>`(select count(*) || ':' || coalesce(max(updated_at) || '', '') from ${sql.table(table)} where site_id = ${siteId})`;
  const { rows } = await sql<{ v: string }>`select ${sql.join(
    [
      part('contents'),
      part('categories'),
      part('tags'),
      part('site_blocks'),
      part('sitemap_entries'),
      part('sitemap_rules'),
      part('sitemap_sources'),
      part('seo_settings'),
      sql`(select coalesce(updated_at || '', '') from sites where id = ${siteId})`,
    ],
    sql` || '|' || `,
  )} as v`.execute(db);
  return rows[0]?.v ?? '';
}

/**
 * Generated outputs (sitemaps, robots.txt, llms.txt, markdown) kept per site in memory
 * (decisions S14): served as they are while the site's version (above) is unchanged, checked at
 * most once per `checkMs` per site, so every instance sees a change within that time whoever
 * made it, with no coupling between the writers and this cache. Concurrent misses build once.
 * At most `maxBytes` are held, least recently used out first.
 */
export class OutputCache {
  private readonly entries = new Map<string, Entry>();
  private readonly building = new Map<string, Promise<Entry>>();
  private readonly versions = new Map<string, { version: Promise<string>; at: number }>();
  private bytes = 0;

  constructor(
    private readonly db: Executor,
    private readonly checkMs = 1000,
    private readonly maxBytes = 256 * 1024 * 1024,
  ) {}

  private version(siteId: string, fresh: boolean): Promise<string> {
    const now = Date.now();
    const known = this.versions.get(siteId);
    if (known && !fresh && now - known.at < this.checkMs) return known.version;
    const version = siteVersion(this.db, siteId);
    this.versions.set(siteId, { version, at: now });
    version.catch(() => this.versions.delete(siteId));
    if (this.versions.size > 10_000) this.versions.delete(this.versions.keys().next().value!);
    return version;
  }

  /**
   * The output, built when missing or out of date. `fresh` checks the version now (management
   * reads: an editor sees a change at once); public reads (crawlers) check it at most once per
   * `checkMs`.
   */
  async get(siteId: string, name: string, build: () => Promise<string>, fresh = false): Promise<CachedOutput> {
    const key = `${siteId}\n${name}`;
    const version = await this.version(siteId, fresh);
    const held = this.entries.get(key);
    if (held && held.version === version) {
      this.entries.delete(key);
      this.entries.set(key, held);
      return held;
    }
    const pending = this.building.get(key);
    if (pending) return pending;
    const made = build().then((text) => {
      const body = Buffer.from(text);
      const entry: Entry = { body, etag: etagOf(body), version, bytes: body.length };
      this.forget(key);
      this.entries.set(key, entry);
      this.bytes += entry.bytes;
      while (this.bytes > this.maxBytes && this.entries.size > 1) this.forget(this.entries.keys().next().value!);
      return entry;
    });
    this.building.set(key, made);
    try {
      return await made;
    } finally {
      this.building.delete(key);
    }
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.entries.delete(key);
  }
}

const caches = new WeakMap<object, OutputCache>();

/** The one output cache of a database handle (the seo, sitemap and llms modules share it). */
export function outputCacheFor(db: Executor): OutputCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new OutputCache(db)));
  return cache;
}
