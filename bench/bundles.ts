/**
 * `npx tsx bench/bundles.ts` (issue 35): exports a large site to a bundle and imports it into a
 * new site, on SQLite with files on local disk, reporting time per thousand posts and the
 * process's RSS during each phase (sampled every 50 ms), to show memory stays flat.
 *
 * Sizes (environment): BENCH_BUNDLE_POSTS (default 50,000 posts, each with a ~2 KB body, two
 * categories, two tags and one revision), BENCH_BUNDLE_MEDIA_MB (default 2,048 MB of stored
 * files) in files of BENCH_BUNDLE_FILE_MB (default 4 MB, random bytes: incompressible, like
 * photos). The site is seeded with SQL (prepared statements, one transaction), not through the API.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { exportSite } from '../src/modules/bundles/bundles.export.js';
import { importBundle } from '../src/modules/bundles/bundles.import.js';
import { createSite } from '../src/modules/sites/sites.service.js';
import { SecretBox } from '../src/shared/secrets.js';
import { LocalDiskStorage, mediaPrefix } from '../src/shared/storage.js';

const POSTS = Number(process.env.BENCH_BUNDLE_POSTS ?? 50_000);
const MEDIA_MB = Number(process.env.BENCH_BUNDLE_MEDIA_MB ?? 2_048);
const FILE_MB = Number(process.env.BENCH_BUNDLE_FILE_MB ?? 4);
const MEDIA_BASE = 'http://bench.test';

/**
 * BENCH_BUNDLE_DIR and BENCH_BUNDLE_PHASE split the run so only the measured part holds the bench
 * lock: `seed` fills the directory (run it at nice 19, outside the lock), `measure` exports and
 * imports what is there (under `flock /work/bench.lock`). Without them, both in one run in a
 * temporary directory.
 */
const PHASE = process.env.BENCH_BUNDLE_PHASE ?? 'all';
const dir = process.env.BENCH_BUNDLE_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-bundles-'));
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, 'cairn.db');
const storage = new LocalDiskStorage(path.join(dir, 'files'));

function seed(siteId: string, userId: string) {
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  const at = new Date('2026-01-01T00:00:00.000Z').toISOString();
  const category = sqlite.prepare(
    "insert into categories (site_id, name, slug, locale, translation_group, content_mode, schema_source, created_at, updated_at) values (?, ?, ?, 'en', ?, 'standard', 'own', ?, ?)",
  );
  const tag = sqlite.prepare("insert into tags (site_id, name, slug, locale, translation_group, created_at, updated_at) values (?, ?, ?, 'en', ?, ?, ?)");
  const content = sqlite.prepare(
    "insert into contents (site_id, type, title, slug, status, locale, translation_group, author_id, featured_image_url, created_at, updated_at, published_at) values (?, 'post', ?, ?, 'published', 'en', ?, ?, ?, ?, ?, ?)",
  );
  const body = sqlite.prepare('insert into content_bodies (content_id, site_id, body, body_html, body_text) values (?, ?, ?, ?, ?)');
  const link = (table: string, column: string) => sqlite.prepare(`insert into ${table} (site_id, content_id, ${column}, position) values (?, ?, ?, ?)`);
  const [contentCategory, contentTag] = [link('content_categories', 'category_id'), link('content_tags', 'tag_id')];
  const revision = sqlite.prepare(
    "insert into content_revisions (site_id, content_id, author_id, action, changes, snapshot, created_at) values (?, ?, ?, 'create', ?, ?, ?)",
  );
  const media = sqlite.prepare(
    "insert into media_files (id, site_id, filename, original_name, mime_type, size, storage_key, etag, variant_widths, created_at, updated_at) values (?, ?, ?, ?, 'image/jpeg', ?, ?, ?, '[]', ?, ?)",
  );
  const mediaIds: string[] = [];
  const files = Math.round(MEDIA_MB / FILE_MB);
  for (let i = 0; i < files; i++) {
    const id = randomUUID();
    const key = `${mediaPrefix(siteId, id)}/original`;
    const target = path.join(dir, 'files', key);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const bytes = FILE_MB * 1024 * 1024;
    fs.writeFileSync(target, randomBytes(bytes));
    media.run(id, siteId, `photo-${i}.jpg`, `Photo ${i}.jpg`, bytes, key, randomUUID(), at, at);
    mediaIds.push(id);
  }
  sqlite.transaction(() => {
    const cats = Array.from({ length: 20 }, (_, i) => Number(category.run(siteId, `Category ${i}`, `category-${i}`, randomUUID(), at, at).lastInsertRowid));
    const tags = Array.from({ length: 50 }, (_, i) => Number(tag.run(siteId, `Tag ${i}`, `tag-${i}`, randomUUID(), at, at).lastInsertRowid));
    const paragraph = 'Cairn keeps the content of many sites in one service. '.repeat(30);
    for (let i = 0; i < POSTS; i++) {
      const image = mediaIds.length ? `${MEDIA_BASE}/files/${siteId}/${mediaIds[i % mediaIds.length]}/photo.jpg` : null;
      const id = Number(content.run(siteId, `Post ${i}`, `post-${i}`, randomUUID(), userId, image, at, at, at).lastInsertRowid);
      const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `${paragraph}${i}` }] }] };
      body.run(id, siteId, JSON.stringify(doc), `<p>${paragraph}${i}</p>`, `${paragraph}${i}`);
      contentCategory.run(siteId, id, cats[i % cats.length], 0);
      contentCategory.run(siteId, id, cats[(i + 7) % cats.length], 1);
      contentTag.run(siteId, id, tags[i % tags.length], 0);
      contentTag.run(siteId, id, tags[(i + 11) % tags.length], 1);
      revision.run(siteId, id, userId, JSON.stringify(['title', 'body']), JSON.stringify({ title: `Post ${i}`, slug: `post-${i}` }), at);
    }
  })();
  sqlite.close();
}

/** Runs `fn`, sampling RSS every 50 ms: time, RSS before, peak RSS and growth (MiB). */
async function measured<T>(label: string, fn: () => Promise<T>): Promise<T> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const start = performance.now();
  try {
    return await fn();
  } finally {
    clearInterval(timer);
    const seconds = (performance.now() - start) / 1000;
    const mib = (n: number) => (n / 1024 / 1024).toFixed(0);
    global.gc?.();
    const after = process.memoryUsage();
    console.log(
      `${label.padEnd(8)} ${seconds.toFixed(1)} s, ${((seconds * 1000) / (POSTS / 1000)).toFixed(0)} ms per 1,000 posts; RSS ${mib(before)} MiB before, peak ${mib(peak)} MiB (growth ${mib(peak - before)} MiB); after, with a collection: heap ${mib(after.heapUsed)} MiB, external ${mib(after.external)} MiB`,
    );
  }
}

async function main() {
  const siteFile = path.join(dir, 'site.json');
  if (PHASE !== 'measure') {
    const database = connectDatabase({ databaseUrl: file });
    await migrateToLatest(database);
    const made = await createSite(database.db, { name: 'Bench', domain: 'bench.test' });
    await database.close();
    const seedStart = performance.now();
    seed(made.id, made.ownerUserId);
    fs.writeFileSync(siteFile, JSON.stringify({ id: made.id }));
    console.log(
      `Seeded ${POSTS.toLocaleString('en')} posts and ${Math.round(MEDIA_MB / FILE_MB)} files of ${FILE_MB} MiB (${MEDIA_MB.toLocaleString('en')} MiB) in ${((performance.now() - seedStart) / 1000).toFixed(0)} s`,
    );
    if (PHASE === 'seed') return;
  }
  const site = JSON.parse(fs.readFileSync(siteFile, 'utf8')) as { id: string };
  console.log(
    `load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  const db = connectDatabase({ databaseUrl: file });
  const deps = { db: db.db, storage, secrets: new SecretBox(Buffer.alloc(32, 7)), mediaPublicUrl: MEDIA_BASE };
  const bundle = path.join(dir, 'site.tar.gz');
  const summary = await measured('export', () => exportSite(deps, site.id, bundle));
  console.log(`  bundle ${(summary.bytes / 1024 / 1024).toFixed(0)} MiB, ${summary.groups.contents!.count} contents, ${summary.groups.files!.count} files`);
  const report = await measured('import', () => importBundle(deps, bundle, {}));
  console.log(`  created ${report.groups.contents!.created} contents, ${report.groups.files!.created} files into ${report.siteId}`);
  const again = await measured('re-import', () => importBundle(deps, bundle, { into: report.siteId! }));
  const changed = Object.values(again.groups).reduce((n, c) => n + c.created + c.updated, 0);
  console.log(`  second import: ${changed} records and files changed`);
  console.log(
    `load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  await db.close();
  if (!process.env.BENCH_BUNDLE_DIR) fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  if (!process.env.BENCH_BUNDLE_DIR) fs.rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
