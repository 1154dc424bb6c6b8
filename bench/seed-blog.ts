/**
 * A realistic blog for the contents, categories and tags rows of `npm run bench`:
 *
 * - 200 categories in a 3-level tree (8 roots, 4 children each, 5 grandchildren each);
 * - 500 tags;
 * - 10,000 posts of about 5 KB of text each (mostly published, some drafts, a few archived),
 *   each in 1-3 categories and with 2-6 tags, by the site owner, locale `en`, created over two
 *   years; bodies are markdown rendered through the service's own rich-text code
 *   (src/shared/richtext), so `body` (ProseMirror JSON), `body_html` and `body_text` are what
 *   the service would store. 200 distinct bodies are rendered and reused (rendering is the slow
 *   part); titles, slugs, excerpts and dates are per post.
 *
 * Rows are written with Kysely in batches inside one transaction, with explicit ids so the links
 * need no read-back. The full-text index (migration 0009) is filled by its insert trigger; the
 * seeder checks that it answers. Each post gets its `create` revision, as through the API.
 *
 * Everything is drawn from a seeded PRNG, so every run seeds the same site. The search words are
 * chosen from what was generated: a common word (in about a third of the posts) and a rare one
 * (in about 1%), with their exact document frequencies in the context.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { dialectOf } from '../src/db/dialect.js';
import type { Db } from '../src/db/types.js';
import { markdownToDoc, renderDoc } from '../src/shared/richtext/index.js';
import { nextFreeSlug, slugify } from '../src/shared/slug.js';
import type { BenchContext } from './endpoints.js';

export const BLOG = {
  rootCategories: 8,
  childrenPerRoot: 4,
  grandchildrenPerChild: 5,
  tags: 500,
  posts: 10_000,
  distinctBodies: 200,
  /** Target size of each body's markdown source, characters. */
  bodyChars: 5_000,
  /** Share of posts published, and archived; the rest are drafts. */
  publishedShare: 0.85,
  archivedShare: 0.03,
  /** Target document frequencies of the two search words. */
  commonWordShare: 1 / 3,
  rareWordShare: 0.01,
} as const;

// ------------------------------------------------------------------------------------------------
// Deterministic randomness

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;

/** Sampler over `words` with Zipf weights 1/rank^s: a few words everywhere, a long tail of rare ones. */
function zipf(rng: Rng, words: readonly string[], s: number): () => string {
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < words.length; i++) cumulative.push((sum += 1 / (i + 1) ** s));
  return () => {
    const x = rng() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
}

/** `k` distinct items of `list`. */
function sample<T>(rng: Rng, list: readonly T[], k: number): T[] {
  const copy = [...list];
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rng() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, k);
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// ------------------------------------------------------------------------------------------------
// Vocabulary

const FUNCTION_WORDS = (
  'the the the a a of of to to and and in in is for with that on as it this by from are be at or an ' +
  'we you they can will not but when more so if how what all about into than then also which only their our these most each'
).split(' ');

/** Content words, most frequent first (their Zipf rank). */
const CONTENT_WORDS = (
  'system data team work time project code user service change process people design release product feature ' +
  'performance page model problem question support version result test build value state request update field ' +
  'report content search review network source issue error query file object rule event language server client ' +
  'decision plan market policy budget strategy story reader writer editor article draft quality standard library ' +
  'platform framework interface component module package function method pattern structure format schema record ' +
  'document image video audio camera screen window button menu layout color font style theme brand logo message ' +
  'email account profile setting option preference permission role access token session cookie cache memory disk ' +
  'storage backup archive history log metric signal alert monitor dashboard chart graph table index column row ' +
  'count total average median limit range scale growth trend forecast estimate target goal milestone deadline ' +
  'meeting workshop conference talk lecture course lesson tutorial guide manual handbook checklist template example ' +
  'sample prototype experiment hypothesis evidence analysis insight finding summary conclusion opinion argument ' +
  'debate interview survey feedback comment reply thread forum community member volunteer partner customer vendor ' +
  'supplier contract invoice payment price cost revenue profit margin investment fund grant salary benefit office ' +
  'remote travel weekend morning evening winter summer spring autumn garden kitchen recipe coffee bread river mountain ' +
  'forest ocean island city village street bridge station airport harbor museum gallery theater studio workshop ' +
  'laboratory hospital school university student teacher parent child family friend neighbor manager leader founder ' +
  'engineer designer developer researcher scientist analyst consultant journalist photographer musician artist ' +
  'author poet actor athlete coach doctor nurse lawyer judge farmer baker chef pilot driver sailor soldier ' +
  'careful quick slow simple complex modern classic open private public local global digital physical natural ' +
  'visual formal casual practical theoretical reliable flexible robust fragile secure stable portable scalable ' +
  'efficient elegant honest curious patient brave quiet loud bright dark fresh ancient recent future annual weekly ' +
  'migrate deploy refactor measure improve reduce increase balance compare explain describe publish schedule archive ' +
  'translate review approve reject merge split combine connect share discover explore imagine remember forget ' +
  'borrow replace repair protect prevent recover predict negotiate organize simplify automate document celebrate'
).split(' ');

/** Rare subject words: each body is about three of them, so each lands in about 1-2% of the posts. */
const TOPIC_WORDS = (
  'kubernetes postgres sqlite webassembly typescript rustacean graphql terraform ansible prometheus grafana kafka ' +
  'rabbitmq elasticsearch redis nginx haproxy wireguard tailscale cloudflare netlify vercel figma sketch blender ' +
  'photoshop lightroom audacity ableton kotlin swift flutter svelte solidjs astro remix nuxt gatsby hugo jekyll ' +
  'eleventy docusaurus storybook playwright cypress vitest jest mocha esbuild rollup webpack parcel turbopack deno ' +
  'bun fastify express koa hapi nestjs django flask rails laravel phoenix elixir erlang haskell ocaml clojure scala ' +
  'fortran cobol pascal lisp prolog smalltalk zig nim crystal julia matlab octave pandas numpy pytorch tensorflow ' +
  'jupyter airflow dagster dbt snowflake bigquery redshift clickhouse duckdb cassandra mongodb couchdb dynamodb ' +
  'neo4j arangodb influxdb timescale supabase firebase appwrite pocketbase strapi ghost wordpress drupal joomla ' +
  'contentful sanity directus payload keystone tiptap prosemirror lexical quill markdown asciidoc latex pandoc ' +
  'inkscape krita gimp darktable kdenlive obs handbrake ffmpeg imagemagick libvips sharp squoosh'
).split(' ');

const SECTION_OPENERS = ['Why', 'How', 'What', 'When', 'Notes on', 'Lessons from', 'A look at', 'Getting started with', 'Beyond', 'Rethinking'];

// ------------------------------------------------------------------------------------------------
// Markdown bodies

interface Body {
  markdown: string;
  body: string;
  html: string;
  text: string;
  firstSentence: string;
  /** Lower-case words of the text (for document frequencies). */
  words: Set<string>;
}

function makeBody(rng: Rng, nextWord: () => string, bodyChars: number = BLOG.bodyChars): string {
  const topics = sample(rng, TOPIC_WORDS, 3);
  const word = () => {
    const r = rng();
    if (r < 0.42) return pick(rng, FUNCTION_WORDS);
    if (r < 0.45) return pick(rng, topics);
    return nextWord();
  };
  const inline = (w: string) => {
    const r = rng();
    if (r < 0.02) return `**${w}**`;
    if (r < 0.035) return `*${w}*`;
    if (r < 0.045) return `\`${w}\``;
    if (r < 0.05) return `[${w}](https://example.com/${slugify(w) || 'page'}/${int(rng, 1, 999)})`;
    return w;
  };
  const sentence = (plain = false) => {
    const n = int(rng, 8, 20);
    const words = Array.from({ length: n }, () => (plain ? word() : inline(word())));
    return `${capitalize(words.join(' '))}${rng() < 0.1 ? '?' : '.'}`;
  };
  const paragraph = () => Array.from({ length: int(rng, 3, 6) }, () => sentence()).join(' ');

  const blocks: string[] = [Array.from({ length: 3 }, () => sentence(true)).join(' '), paragraph()];
  let length = blocks.join('\n\n').length;
  while (length < bodyChars) {
    const heading = `## ${pick(rng, SECTION_OPENERS)} ${[nextWord(), pick(rng, topics), nextWord()].join(' ')}`;
    const section = [heading, paragraph(), paragraph()];
    const extra = rng();
    if (extra < 0.35)
      section.push(Array.from({ length: int(rng, 3, 5) }, () => `- ${capitalize(Array.from({ length: int(rng, 3, 9) }, word).join(' '))}`).join('\n'));
    else if (extra < 0.5) section.push(`> ${sentence()} ${sentence()}`);
    else if (extra < 0.6) section.push(`\`\`\`ts\nconst ${nextWord()} = await ${pick(rng, topics)}.${nextWord()}({ limit: ${int(rng, 1, 100)} });\n\`\`\``);
    if (rng() < 0.5) section.push(paragraph());
    blocks.push(...section);
    length += section.join('\n\n').length + 2;
  }
  return blocks.join('\n\n');
}

function renderBody(markdown: string): Body {
  const rendered = renderDoc(markdownToDoc(markdown));
  const firstSentence = /^[^.?]*[.?]/.exec(rendered.text)?.[0] ?? rendered.text.slice(0, 160);
  return {
    markdown,
    body: JSON.stringify(rendered.doc),
    html: rendered.html,
    text: rendered.text,
    firstSentence,
    words: new Set(rendered.text.toLowerCase().match(/[a-z0-9]+/g) ?? []),
  };
}

/** One ~5 KB markdown document (for the create row): generated like the seeded bodies. */
export function benchMarkdown(seed = 7): string {
  const rng = mulberry32(seed);
  return makeBody(rng, zipf(rng, CONTENT_WORDS, 1.05));
}

// ------------------------------------------------------------------------------------------------
// The seeder

async function nextId(db: Db, table: 'categories' | 'tags' | 'contents'): Promise<number> {
  const row = await sql<{ n: number | null }>`select max(id) as n from ${sql.table(table)}`.execute(db);
  return Number(row.rows[0]?.n ?? 0) + 1;
}

async function insertBatches<T>(rows: T[], size: number, insert: (batch: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size));
}

const DAY = 86_400_000;

interface CategoryRow {
  id: number;
  parent_id: number | null;
  name: string;
  slug: string;
  description: string | null;
}

/**
 * The whole blog as rows, from a seeded PRNG: the same every run. Ids start at `first` (the
 * direct seeder's next free ids; the API seeder maps them to the ids the API gives).
 */
/** How big a blog to plan: the bench's 10,000 posts of ~5 KB, or the million-post table's (bench/million.ts). */
export interface BlogSize {
  posts: number;
  bodyChars: number;
}

type PostRow = Record<string, unknown> & { id: number; markdown: string; slug: string; site_id: string; body: string; body_html: string; body_text: string };
type CategoryLink = { site_id: string; content_id: number; category_id: number; position: number };
type TagLink = { site_id: string; content_id: number; tag_id: number; position: number };
/** One planned post with its links. */
export interface PlannedPost {
  post: PostRow;
  categoryLinks: CategoryLink[];
  tagLinks: TagLink[];
}

/**
 * The blog's taxonomy, and its posts as a generator (a million posts are written as they are
 * drawn, never held at once); `finish()`, once every post was drawn, gives the search words,
 * the chosen post and the counts. The draws are the same whichever way the posts are consumed.
 */
export function planBlogStream(
  siteId: string,
  userId: string,
  first: { category: number; tag: number; post: number },
  size: BlogSize = { posts: BLOG.posts, bodyChars: BLOG.bodyChars },
) {
  const rng = mulberry32(20_240_601);
  const nextWord = zipf(rng, CONTENT_WORDS, 1.05);
  const t0 = performance.now();
  const bodies: Body[] = Array.from({ length: BLOG.distinctBodies }, () => renderBody(makeBody(rng, nextWord, size.bodyChars)));
  const renderMs = performance.now() - t0;

  const end = Date.now() - DAY;
  const start = end - 730 * DAY;
  const iso = (ms: number) => new Date(ms).toISOString();

  // Categories: roots, then children, then grandchildren (parents come before their children).
  const usedCategorySlugs = new Set<string>();
  const categoryRows: CategoryRow[] = [];
  let categoryId = first.category;
  const names = sample(rng, CONTENT_WORDS.slice(0, 300), 300);
  let nameIndex = 0;
  const addCategory = (name: string, parent: number | null) => {
    const slug = nextFreeSlug(slugify(name), usedCategorySlugs);
    usedCategorySlugs.add(slug);
    categoryRows.push({ id: categoryId++, parent_id: parent, name, slug, description: null });
    return categoryId - 1;
  };
  for (let r = 0; r < BLOG.rootCategories; r++) {
    const rootName = capitalize(names[nameIndex++]!);
    const root = addCategory(rootName, null);
    for (let c = 0; c < BLOG.childrenPerRoot; c++) {
      const childName = `${rootName} ${names[nameIndex++]!}`;
      const child = addCategory(childName, root);
      for (let g = 0; g < BLOG.grandchildrenPerChild; g++)
        addCategory(`${capitalize(pick(rng, TOPIC_WORDS))} ${names[(nameIndex + g * 7) % names.length]!}`, child);
    }
  }
  for (const c of categoryRows) c.description = rng() < 0.6 ? `Posts about ${c.name.toLowerCase()}.` : null;

  // Tags: unique names from topic words and word pairs.
  const tagNames = new Set<string>(TOPIC_WORDS);
  while (tagNames.size < BLOG.tags) tagNames.add(`${pick(rng, CONTENT_WORDS)} ${pick(rng, CONTENT_WORDS)}`);
  const usedTagSlugs = new Set<string>();
  let tagId = first.tag;
  const tagRows = [...tagNames].slice(0, BLOG.tags).map((name, i) => {
    const slug = nextFreeSlug(slugify(name), usedTagSlugs);
    usedTagSlugs.add(slug);
    // Spread over the two years, so the default order (created_at desc) is a real sort.
    const at = iso(start + Math.floor((i / BLOG.tags) * 730 * DAY));
    return {
      id: tagId++,
      site_id: siteId,
      name,
      slug,
      description: rng() < 0.3 ? `Everything about ${name}.` : null,
      locale: 'en',
      translation_group: randomUUID(),
      created_at: at,
      updated_at: at,
    };
  });

  // Posts, in creation order; ids follow created_at.
  const categoryIds = categoryRows.map((c) => c.id);
  const tagIds = tagRows.map((t) => t.id);
  // Popular tags and categories: a Zipf pick over a shuffled list.
  const nextCategory = zipf(rng, sample(rng, categoryIds, categoryIds.length).map(String), 0.8);
  const nextTag = zipf(rng, sample(rng, tagIds, tagIds.length).map(String), 0.9);
  const usedPostSlugs = new Set<string>();
  const df = new Map<string, number>();
  let postId = first.post;
  const publishedIds: number[] = [];
  const publishedSlugs: string[] = [];
  const counts = { categories: categoryRows.length, tags: tagRows.length, posts: 0, published: 0, categoryLinks: 0, tagLinks: 0 };
  const step = (end - start) / size.posts;
  function* posts(): Generator<PlannedPost> {
    for (let i = 0; i < size.posts; i++) {
      const id = postId++;
      const body = bodies[i % bodies.length]!;
      const title = capitalize([...Array.from({ length: int(rng, 3, 7) }, nextWord), pick(rng, TOPIC_WORDS)].sort(() => rng() - 0.5).join(' '));
      const slug = nextFreeSlug(slugify(title, 500) || 'post', usedPostSlugs, 500);
      usedPostSlugs.add(slug);
      const created = Math.floor(start + i * step + rng() * step * 0.9);
      const r = rng();
      const status = r < BLOG.publishedShare ? 'published' : r < BLOG.publishedShare + BLOG.archivedShare ? 'archived' : 'draft';
      const published = status === 'draft' ? null : Math.min(end, created + int(rng, 0, 48) * 3_600_000);
      const updated = Math.min(end, Math.max(published ?? created, created + int(rng, 0, 30) * DAY));
      const hasImage = rng() < 0.6;
      const post: PostRow = {
        id,
        markdown: body.markdown,
        site_id: siteId,
        type: 'post',
        title,
        slug,
        status,
        excerpt: rng() < 0.7 ? body.firstSentence : null,
        locale: 'en',
        translation_group: randomUUID(),
        author_id: userId,
        body: body.body,
        body_html: body.html,
        body_text: body.text,
        featured_image_url: hasImage ? `https://cdn.example.com/images/${slug}.jpg` : null,
        featured_image_alt: hasImage ? title : null,
        meta_title: rng() < 0.4 ? title : null,
        meta_description: rng() < 0.4 ? body.firstSentence : null,
        meta_keywords: null,
        canonical_url: null,
        og_image: null,
        metadata: null,
        custom_data: null,
        structured_data: null,
        scheduled_at: null,
        published_at: published === null ? null : iso(published),
        created_at: iso(created),
        updated_at: iso(updated),
      };
      if (status === 'published') {
        publishedIds.push(id);
        publishedSlugs.push(slug);
      }
      const cats = new Set<number>();
      const nCats = int(rng, 1, 3);
      while (cats.size < nCats) cats.add(Number(nextCategory()));
      const categoryLinks = [...cats].map((c, position) => ({ site_id: siteId, content_id: id, category_id: c, position }));
      const tgs = new Set<number>();
      const nTags = int(rng, 2, 6);
      while (tgs.size < nTags) tgs.add(Number(nextTag()));
      const tagLinks = [...tgs].map((t, position) => ({ site_id: siteId, content_id: id, tag_id: t, position }));
      for (const w of body.words) df.set(w, (df.get(w) ?? 0) + 1);
      for (const w of new Set(title.toLowerCase().match(/[a-z0-9]+/g) ?? [])) if (!body.words.has(w)) df.set(w, (df.get(w) ?? 0) + 1);
      counts.posts++;
      counts.categoryLinks += categoryLinks.length;
      counts.tagLinks += tagLinks.length;
      yield { post, categoryLinks, tagLinks };
    }
  }

  const finish = () => {
    counts.published = publishedIds.length;
    // Search words: a content word in about a third of the posts, a topic word in about 1%.
    const closest = (words: readonly string[], share: number) => {
      const target = share * size.posts;
      return words.filter((w) => df.has(w)).reduce((best, w) => (Math.abs(df.get(w)! - target) < Math.abs(df.get(best)! - target) ? w : best));
    };
    const common = closest(CONTENT_WORDS, BLOG.commonWordShare);
    const rare = closest(TOPIC_WORDS, BLOG.rareWordShare);
    // A published post from the middle of the list (not on page 1, not the newest).
    const middle = Math.floor(publishedIds.length / 2);
    const post = { id: publishedIds[middle]!, slug: publishedSlugs[middle]! };
    const result: Record<string, unknown> = {
      postId: post.id,
      postSlug: post.slug,
      searchCommon: common,
      searchCommonPosts: df.get(common),
      searchRare: rare,
      searchRarePosts: df.get(rare),
      createMarkdown: benchMarkdown(),
    };
    const avg = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    const describe = (writeMs: number, how: string) =>
      `${counts.categories} categories, ${counts.tags} tags, ${counts.posts} posts (${counts.published} published), ` +
      `${counts.categoryLinks} category links, ${counts.tagLinks} tag links; bodies ~${avg(bodies.map((b) => b.markdown.length))} chars markdown, ` +
      `~${avg(bodies.map((b) => b.text.length))} text, ~${avg(bodies.map((b) => b.html.length))} HTML, ~${avg(bodies.map((b) => b.body.length))} JSON; ` +
      `render ${(renderMs / 1000).toFixed(1)} s, ${how} ${(writeMs / 1000).toFixed(1)} s; ` +
      `search words "${common}" (in ${String(df.get(common))} posts) and "${rare}" (in ${String(df.get(rare))})`;
    return { post, result, counts, describe };
  };
  return { categoryRows, tagRows, posts, finish };
}

/** The whole blog in memory (10,000 posts): the rows of the stream, then what `finish` gives. */
function planBlog(siteId: string, userId: string, first: { category: number; tag: number; post: number }) {
  const stream = planBlogStream(siteId, userId, first);
  const posts: PostRow[] = [];
  const categoryLinks: CategoryLink[] = [];
  const tagLinks: TagLink[] = [];
  for (const p of stream.posts()) {
    posts.push(p.post);
    categoryLinks.push(...p.categoryLinks);
    tagLinks.push(...p.tagLinks);
  }
  return { categoryRows: stream.categoryRows, tagRows: stream.tagRows, posts, categoryLinks, tagLinks, ...stream.finish() };
}

/**
 * Writes planned posts with every row a create through the API makes: the `contents` row, its
 * `content_bodies` row (whose insert trigger fills SQLite's `contents_fts`; PostgreSQL's
 * `search_vector` is generated), its category and tag links, and one `create` revision with the
 * post's snapshot in API names (decisions C3), like the service's writeRevision.
 */
/** Every row a create writes for these posts, per table, in insertion order (insertPosts, and bench/million.ts's bulk path). */
export function postTableRows(posts: readonly PostRow[], categoryLinks: readonly CategoryLink[], tagLinks: readonly TagLink[]) {
  const linked = (links: readonly { content_id: number; position: number }[], id: (l: never) => number) => {
    const by = new Map<number, number[]>();
    for (const l of links) (by.get(l.content_id) ?? by.set(l.content_id, []).get(l.content_id)!)[l.position] = id(l as never);
    return by;
  };
  const categoriesOf = linked(categoryLinks, (l: CategoryLink) => l.category_id);
  const tagsOf = linked(tagLinks, (l: TagLink) => l.tag_id);
  const revisions = posts.map((p) => {
    const snapshot = {
      type: p.type,
      title: p.title,
      slug: p.slug,
      excerpt: p.excerpt,
      locale: p.locale,
      featuredImageUrl: p.featured_image_url,
      featuredImageAlt: p.featured_image_alt,
      meta: { metaTitle: p.meta_title, metaDescription: p.meta_description, metaKeywords: null, canonicalUrl: null, ogImage: null },
      metadata: {},
      customData: null,
      structuredData: null,
      status: p.status,
      scheduledAt: null,
      publishedAt: p.published_at,
      categoryIds: categoriesOf.get(p.id) ?? [],
      tagIds: tagsOf.get(p.id) ?? [],
    };
    return {
      site_id: p.site_id,
      content_id: p.id,
      author_id: p.author_id as string,
      action: 'create',
      changes: JSON.stringify(['body', ...Object.keys(snapshot)]),
      snapshot: `{"body":${p.body},${JSON.stringify(snapshot).slice(1)}`,
      created_at: p.created_at as string,
    };
  });
  return {
    contents: posts.map(({ markdown: _markdown, body: _body, body_html: _html, body_text: _text, ...row }) => row),
    // The bodies go to their own table (migration 0025), after their rows.
    content_bodies: posts.map((p) => ({ content_id: p.id, site_id: p.site_id, body: p.body, body_html: p.body_html, body_text: p.body_text })),
    content_categories: [...categoryLinks],
    content_tags: [...tagLinks],
    content_revisions: revisions,
  };
}

export async function insertPosts(tx: Db, posts: readonly PostRow[], categoryLinks: readonly CategoryLink[], tagLinks: readonly TagLink[]): Promise<void> {
  const rows = postTableRows(posts, categoryLinks, tagLinks);
  // 24 columns a row: 25 rows stay far below SQLite's bound-parameter limit.
  const batchOf = { contents: 25, content_bodies: 100, content_categories: 500, content_tags: 500, content_revisions: 100 };
  for (const table of Object.keys(batchOf) as Array<keyof typeof batchOf>)
    await insertBatches(rows[table] as Record<string, unknown>[], batchOf[table], (batch) =>
      tx
        .insertInto(table)
        .values(batch as never)
        .execute(),
    );
}

/**
 * Seeds the blog straight into the database. Returns, for the endpoints' paths and bodies: a
 * published post's id and slug, the two search words with their document frequencies, and counts.
 */
export async function seedBlog(db: Db, siteId: string, userId: string, _ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  const first = { category: await nextId(db, 'categories'), tag: await nextId(db, 'tags'), post: await nextId(db, 'contents') };
  const plan = planBlog(siteId, userId, first);
  const t0 = performance.now();
  await db.transaction().execute(async (tx) => {
    const createdAt = new Date(Date.now() - 761 * DAY).toISOString();
    await insertBatches(plan.categoryRows, 100, (batch) =>
      tx
        .insertInto('categories')
        .values(
          batch.map((c) => ({
            ...c,
            site_id: siteId,
            image: null,
            locale: 'en',
            translation_group: randomUUID(),
            sitemap_priority: null,
            sitemap_changefreq: null,
            content_mode: 'standard' as const,
            schema: null,
            schema_source: 'own' as const,
            created_at: createdAt,
            updated_at: createdAt,
          })) as never,
        )
        .execute(),
    );
    await insertBatches(plan.tagRows, 200, (batch) =>
      tx
        .insertInto('tags')
        .values(batch as never)
        .execute(),
    );
    await insertPosts(tx, plan.posts, plan.categoryLinks, plan.tagLinks);
    // PostgreSQL's identity columns do not move on for rows given their id: the server's next
    // insert would take id 1 again.
    if (dialectOf(db).name === 'postgres') {
      for (const table of ['categories', 'tags', 'contents'] as const)
        await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(tx);
    }
  });
  const insertMs = performance.now() - t0;

  // The full-text index (SQLite: filled by the insert trigger of migration 0009; PostgreSQL: the
  // generated search_vector column) must answer.
  const word = String(plan.result.searchCommon);
  const matched =
    dialectOf(db).fullText === 'fts5'
      ? await sql<{ n: number }>`select count(*) as n from contents_fts where contents_fts match ${`"${word}"`}`.execute(db)
      : await sql<{ n: number }>`select count(*) as n from contents where search_vector @@ to_tsquery('simple', ${word})`.execute(db);
  const indexed = Number(matched.rows[0]?.n ?? 0);
  if (indexed === 0) throw new Error('seedBlog: the full-text index finds nothing; is the search part of migration 0009 missing?');
  return { ...plan.result, searchCommonIndexed: indexed, ...plan.counts, summary: plan.describe(insertMs, 'insert') };
}

/**
 * Seeds the same blog through the API of a running server (BENCH_SEED=api), as a user fills a
 * site: categories (parents first), tags, then the posts from their markdown with their status,
 * excerpt, image, meta, categories and tags, four requests at a time. Dates are the server's own.
 */
export async function seedBlogThroughApi(baseUrl: string, token: string, siteId: string, userId: string): Promise<Record<string, unknown>> {
  const plan = planBlog(siteId, userId, { category: 1, tag: 1, post: 1 });
  const t0 = performance.now();
  const post = async (path: string, body: unknown): Promise<{ id: number; slug: string }> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`seedBlogThroughApi: POST ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    const json = JSON.parse(text) as { id?: number; slug?: string; data?: { id: number; slug: string } };
    return json.data ?? (json as { id: number; slug: string });
  };
  const categoryIds = new Map<number, number>();
  for (const c of plan.categoryRows) {
    const parentId = c.parent_id === null ? null : categoryIds.get(c.parent_id)!;
    categoryIds.set(c.id, (await post('/v1/categories', { name: c.name, slug: c.slug, description: c.description, parentId })).id);
  }
  const tagIds = new Map<number, number>();
  for (const t of plan.tagRows) tagIds.set(t.id, (await post('/v1/tags', { name: t.name, slug: t.slug, description: t.description })).id);
  const linksOf = <T extends { content_id: number; position: number }>(links: T[], id: (l: T) => number) => {
    const by = new Map<number, number[]>();
    for (const l of links) {
      const list = by.get(l.content_id) ?? [];
      list[l.position] = id(l);
      by.set(l.content_id, list);
    }
    return by;
  };
  const postCategories = linksOf(plan.categoryLinks, (l) => categoryIds.get(l.category_id)!);
  const postTags = linksOf(plan.tagLinks, (l) => tagIds.get(l.tag_id)!);
  const created = new Map<number, { id: number; slug: string }>();
  let next = 0;
  const worker = async () => {
    while (next < plan.posts.length) {
      const p = plan.posts[next++]!;
      const answer = await post('/v1/contents', {
        type: 'post',
        title: p.title,
        slug: p.slug,
        status: p.status,
        excerpt: p.excerpt,
        bodyMarkdown: p.markdown,
        featuredImageUrl: p.featured_image_url,
        featuredImageAlt: p.featured_image_alt,
        metaTitle: p.meta_title,
        metaDescription: p.meta_description,
        categoryIds: postCategories.get(p.id) ?? [],
        tagIds: postTags.get(p.id) ?? [],
      });
      created.set(p.id, answer);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  const chosen = created.get(plan.post.id)!;
  return { ...plan.result, postId: chosen.id, postSlug: chosen.slug, ...plan.counts, summary: plan.describe(performance.now() - t0, 'through the API') };
}
