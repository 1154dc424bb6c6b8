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
  generation: number;
  bytes: number;
}

/**
 * Generated outputs (sitemaps, robots.txt, llms.txt, markdown) kept per site in memory
 * (decisions S14, S17). An output is served as it is while its site's generation (the delivery
 * cache's "site changed" signal, `DeliveryCache.generationOf`) is the one it was built under: a
 * write through this instance moves it when it answers, so the writer's next read sees the
 * change; another instance's commit moves it when announced (PostgreSQL notifications, SQLite's
 * data_version). No query decides freshness. Concurrent misses of one generation build once. At
 * most `maxBytes` are held, least recently used out first.
 */
export class OutputCache {
  private readonly entries = new Map<string, Entry>();
  private readonly building = new Map<string, Promise<Entry>>();
  private bytes = 0;

  constructor(
    private readonly generationOf: (siteId: string) => number,
    private readonly maxBytes = 256 * 1024 * 1024,
  ) {}

  /** The output, built when missing or built under an older generation of its site. */
  async get(siteId: string, name: string, build: () => Promise<string>): Promise<CachedOutput> {
    const key = `${siteId}\n${name}`;
    const generation = this.generationOf(siteId);
    const held = this.entries.get(key);
    if (held && held.generation === generation) {
      this.entries.delete(key);
      this.entries.set(key, held);
      return held;
    }
    const buildKey = `${key}\n${generation}`;
    const pending = this.building.get(buildKey);
    if (pending) return pending;
    const made = build().then((text) => {
      const body = Buffer.from(text);
      const entry: Entry = { body, etag: etagOf(body), generation, bytes: body.length };
      // A build that raced a change is answered but not kept: its generation is already old.
      if (this.generationOf(siteId) !== generation) return entry;
      this.forget(key);
      this.entries.set(key, entry);
      this.bytes += entry.bytes;
      while (this.bytes > this.maxBytes && this.entries.size > 1) this.forget(this.entries.keys().next().value!);
      return entry;
    });
    this.building.set(buildKey, made);
    try {
      return await made;
    } finally {
      this.building.delete(buildKey);
    }
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.entries.delete(key);
  }
}
