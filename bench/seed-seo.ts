/**
 * A site for the SEO output rows of `npm run bench` (issue 13): the blog's 10,000 posts (bench/seed-blog.ts)
 * copied to a site of their own in three locales (en, de, fr: 30,000 published contents in
 * 10,000 translation groups, so every sitemap URL has four hreflang alternates), with
 * llms.txt on. Copies carry no body (the outputs measured list URLs and titles; the full-text
 * index stays small). The outputs are built once here through the service's own code, timed
 * (the cold build), and written to `$CAIRN_DATA_DIR/bench-outputs/` for the bare server to send
 * as pre-built bytes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../src/db/types.js';
import { llmsFull, llmsTxt } from '../src/modules/seo/llms.service.js';
import { updateSettings } from '../src/modules/seo/seo.service.js';
import { sitemapXml } from '../src/modules/seo/sitemap.service.js';
import { createSite } from '../src/modules/sites/sites.service.js';
import type { BenchContext } from './endpoints.js';
import { seedBlog } from './seed-blog.js';

export const SEO_LOCALES = ['en', 'de', 'fr'] as const;

export function benchOutputsDir(dataDir: string): string {
  return path.join(dataDir, 'bench-outputs');
}

export async function seedSeo(db: Db, blogSiteId: string, userId: string, ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  // The blog comes first (its seeder runs once even when several endpoints name it).
  if (!ctx.postId) Object.assign(ctx as BenchContext, await seedBlog(db, blogSiteId, userId, ctx));
  const site = await createSite(db, { name: 'SEO Bench Site', domain: 'seo-bench.test' });
  await db
    .updateTable('sites')
    .set({ enabled_locales: JSON.stringify(SEO_LOCALES) as never })
    .where('id', '=', site.id)
    .execute();
  for (const locale of SEO_LOCALES) {
    await db
      .insertInto('contents')
      .columns([
        'site_id',
        'type',
        'title',
        'slug',
        'status',
        'excerpt',
        'locale',
        'translation_group',
        'author_id',
        'published_at',
        'created_at',
        'updated_at',
      ])
      .expression(
        db
          .selectFrom('contents')
          .select([
            sql.lit(site.id).as('site_id'),
            'type',
            locale === 'en' ? 'title' : sql<string>`title || ${sql.lit(` (${locale})`)}`.as('title'),
            'slug',
            sql.lit('published').as('status'),
            'excerpt',
            sql.lit(locale).as('locale'),
            'translation_group',
            sql.lit(null).as('author_id'),
            sql`coalesce(published_at, created_at)`.as('published_at'),
            'created_at',
            'updated_at',
          ])
          .where('site_id', '=', blogSiteId)
          .where('locale', '=', 'en') as never,
      )
      .execute();
  }
  // Empty bodies (migration 0025: every content has its row there).
  await db
    .insertInto('content_bodies')
    .columns(['content_id', 'site_id', 'body_html', 'body_text'])
    .expression(
      db
        .selectFrom('contents')
        .select(['id', 'site_id', sql.lit('').as('body_html'), sql.lit('').as('body_text')])
        .where('site_id', '=', site.id) as never,
    )
    .execute();
  await updateSettings(db, site.id, { llmsTxtEnabled: true, llmsSiteDescription: 'A travel blog in three languages.' });

  const dir = benchOutputsDir(String(ctx.dataDir));
  mkdirSync(dir, { recursive: true });
  let t = performance.now();
  const sitemap = await sitemapXml(db, site.id);
  const sitemapMs = performance.now() - t;
  t = performance.now();
  const llms = await llmsTxt(db, site.id);
  const llmsMs = performance.now() - t;
  const full = await streamedFull(db, blogSiteId);
  writeFileSync(path.join(dir, 'sitemap.xml'), sitemap);
  writeFileSync(path.join(dir, 'llms.txt'), llms);
  const mb = (s: string) => (Buffer.byteLength(s) / 1048576).toFixed(1);
  return {
    seoPublicKey: site.publicKey,
    summary:
      `${SEO_LOCALES.length * 10_000} published contents in ${SEO_LOCALES.length} locales on a site of their own; ` +
      `cold builds: sitemap.xml ${mb(sitemap)} MB in ${sitemapMs.toFixed(0)} ms, llms.txt ${mb(llms)} MB in ${llmsMs.toFixed(0)} ms; ` +
      `llms-full.txt of the blog's 10,000 posts (cap lifted) streamed ${(full.bytes / 1048576).toFixed(1)} MB in ${full.ms.toFixed(0)} ms ` +
      `with the heap at most ${full.heapGrowthMb.toFixed(1)} MB above its start`,
  };
}

/**
 * llms-full.txt of the blog site (10,000 posts of ~5 KB) with its size cap lifted, consumed as a
 * client would, the heap sampled after every chunk: memory must stay flat while tens of MB stream.
 */
async function streamedFull(db: Db, blogSiteId: string) {
  await updateSettings(db, blogSiteId, { llmsTxtEnabled: true });
  global.gc?.();
  const start = process.memoryUsage().heapUsed;
  let peak = start;
  let bytes = 0;
  const t = performance.now();
  for await (const chunk of await llmsFull(db, blogSiteId, Number.MAX_SAFE_INTEGER)) {
    bytes += Buffer.byteLength(chunk);
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  await updateSettings(db, blogSiteId, { llmsTxtEnabled: false });
  return { bytes, ms: performance.now() - t, heapGrowthMb: (peak - start) / 1048576 };
}
