/**
 * `npm run bench:million -- fill|context|measure <posts>`: the contents read paths at 10,000 and at 1,000,000 posts (issue 37 item 3).
 *
 *   tsx bench/million.ts fill <posts> [bodyChars]   builds the blog of bench/seed-blog.ts with <posts>
 *                                                  posts straight into the database (run it with
 *                                                  nice -n 19, outside the bench lock)
 *   tsx bench/million.ts context <posts> <common> <rare>  the context of a fill stopped early (new token)
 *   tsx bench/million.ts measure <posts>            serves that database with dist/server.js and loads
 *                                                  each read path at 10 connections (run it under
 *                                                  `flock /work/bench.lock nice -n -5`)
 *
 * The fill draws the same plan as the API fill (planBlogStream: the same taxonomy, titles, slugs,
 * statuses, dates, links, bodies rendered by the service's rich-text code) and writes every row a
 * create makes (postTableRows: contents, content_bodies, links, a revision; SQLite's contents_fts
 * or PostgreSQL's search_vector), a chunk of posts per transaction, so a million posts never sit
 * in memory. SQLite takes the bulk path of bulkSqlite (decisions MP5). `bodyChars` (default 5,000, the bench's)
 * sizes the 200 distinct bodies: at a million posts of 5 KB SQLite holds ~35 GB; the table says
 * which size it measured.
 *
 * Where: BENCH_MILLION_DIR (default /work/data/million) holds `blog-<posts>.sqlite` and
 * `blog-<posts>.json` (the seeded context: token, post id and slug, search words). With
 * BENCH_DATABASE_URL (a PostgreSQL server) the database is `cairn_million_<posts>` there, kept
 * between fill and measure. BENCH_DURATION: seconds per path (default 5).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { connectDatabase } from '../src/db/connect.js';
import { dialectOf } from '../src/db/dialect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { rebuildLinkLists } from '../src/db/migrations/0048_content_link_lists.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import { createSite } from '../src/modules/sites/sites.service.js';
import { freePort, rssMb, serverNodeFlags, startChild, stopChild, waitForHttp } from './children.js';
import { measure, preflight } from './measure.js';
import { adminStatement } from './postgres.js';
import { BLOG, insertPosts, planBlogStream, type PlannedPost, postTableRows } from './seed-blog.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIR = process.env.BENCH_MILLION_DIR ?? '/work/data/million';
const CHUNK = 2_000;
/** Posts per transaction of the SQLite bulk path. */
const BULK_CHUNK = 5_000;
const log = (line = '') => process.stdout.write(`${line}\n`);

function where(posts: number): { databaseUrl: string; contextFile: string; pgAdmin?: string; pgName?: string } {
  const contextFile = path.join(DIR, `blog-${posts}${process.env.BENCH_DATABASE_URL ? '-pg' : ''}.json`);
  if (!process.env.BENCH_DATABASE_URL) return { databaseUrl: path.join(DIR, `blog-${posts}.sqlite`), contextFile };
  const url = new URL(process.env.BENCH_DATABASE_URL);
  const pgName = `cairn_million_${posts}`;
  const admin = url.toString();
  url.pathname = `/${pgName}`;
  return { databaseUrl: url.toString(), contextFile, pgAdmin: admin, pgName };
}

async function fill(posts: number, bodyChars: number) {
  mkdirSync(DIR, { recursive: true });
  const at = where(posts);
  if (at.pgAdmin) {
    await adminStatement(at.pgAdmin, `drop database if exists ${at.pgName} with (force)`);
    await adminStatement(at.pgAdmin, `create database ${at.pgName}`);
  } else for (const suffix of ['', '-wal', '-shm']) rmSync(`${at.databaseUrl}${suffix}`, { force: true });
  const database = connectDatabase({ databaseUrl: at.databaseUrl });
  const db = database.db;
  let closed = false;
  try {
    await migrateToLatest(database);
    const site = await createSite(db, { name: 'Million Site', domain: 'million.test' });
    const token = await createToken(db, { siteId: site.id, userId: site.ownerUserId, name: 'bench', scopes: 'all' });
    const plan = planBlogStream(site.id, site.ownerUserId, { category: 1, tag: 1, post: 1 }, { posts, bodyChars });
    const t0 = performance.now();
    await db.transaction().execute(async (tx) => {
      const createdAt = new Date(Date.now() - 761 * 86_400_000).toISOString();
      for (const c of plan.categoryRows)
        await tx
          .insertInto('categories')
          .values({
            ...c,
            site_id: site.id,
            image: null,
            locale: 'en',
            translation_group: crypto.randomUUID(),
            sitemap_priority: null,
            sitemap_changefreq: null,
            content_mode: 'standard',
            schema: null,
            schema_source: 'own',
            created_at: createdAt,
            updated_at: createdAt,
          } as never)
          .execute();
      for (const t of plan.tagRows)
        await tx
          .insertInto('tags')
          .values(t as never)
          .execute();
    });
    let written = 0;
    const progress = () => {
      if (written % 50_000 === 0 || written === posts)
        log(`${written} posts, ${((performance.now() - t0) / 1000).toFixed(0)} s, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`);
    };
    if (dialectOf(db).name === 'sqlite') {
      // The bulk path holds the file alone: the service's connections (and their checkpoint thread) go first.
      await database.close();
      closed = true;
      bulkSqlite(at.databaseUrl, plan.posts(), (n) => {
        written += n;
        progress();
      });
    } else {
      let chunk: PlannedPost[] = [];
      const flush = async () => {
        await db.transaction().execute((tx) =>
          insertPosts(
            tx,
            chunk.map((p) => p.post),
            chunk.flatMap((p) => p.categoryLinks),
            chunk.flatMap((p) => p.tagLinks),
          ),
        );
        written += chunk.length;
        chunk = [];
        progress();
      };
      for (const p of plan.posts()) {
        chunk.push(p);
        if (chunk.length === CHUNK) await flush();
      }
      if (chunk.length) await flush();
      for (const table of ['categories', 'tags', 'contents'] as const)
        await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(db);
      await sql`vacuum analyze`.execute(db);
    }
    const done = plan.finish();
    const seconds = (performance.now() - t0) / 1000;
    const context = { ...done.result, ...done.counts, token: token.token, siteId: site.id, bodyChars, fillSeconds: Math.round(seconds) };
    delete (context as Record<string, unknown>).createMarkdown;
    writeFileSync(at.contextFile, JSON.stringify(context, null, 2));
    log(done.describe(seconds * 1000, 'direct insert'));
  } finally {
    if (!closed) await database.close();
  }
}

/** The tables a post writes, in insertion order (postTableRows). */
const POST_TABLES = ['contents', 'content_bodies', 'content_categories', 'content_tags', 'content_revisions'] as const;

/**
 * SQLite's bulk path (decisions MP5): the same rows as insertPosts (postTableRows), written with
 * one prepared single-row INSERT per table (no query builder: Kysely compiled a statement per 25
 * rows, a sixth of the fill's CPU), BULK_CHUNK posts a transaction, with the journal in memory and no fsync
 * (nothing is lost if the machine stops: the fill starts over) and a 1 GiB page cache. What grows
 * with the table is deferred: the five tables' secondary indexes and the full-text trigger
 * (content_bodies_fts_ai) are dropped first, and after the load the indexes are created again
 * from their own SQL (one sort each instead of a random B-tree insert per row: at half a million
 * posts the pages of `contents_site_locale_slug_uq` and the link indexes no longer fit the cache)
 * and `contents_fts` is filled by the trigger's own SELECT over all rows, each content's kept
 * category and tag lists by the migration's own rebuild (0048), then the triggers are created again. The index and the full-text table then hold what the row-by-row path gives
 * (the same rows, rowids and text); FTS5's segments are merged as its automerge leaves them.
 */
/** The insert triggers the bulk load replaces by one statement each after it: full text, and the kept link lists (migration 0048). */
const DEFERRED_TRIGGERS = ['content_bodies_fts_ai', 'content_categories_list_ai', 'content_tags_list_ai'].map((t) => `'${t}'`).join(', ');

function bulkSqlite(file: string, rows: Iterable<PlannedPost>, onChunk: (n: number) => void) {
  const raw = new BetterSqlite3(file);
  try {
    // Out of WAL (each page written twice, with checkpoints), to a rollback journal in memory:
    // better-sqlite3's defensive mode refuses `journal_mode = OFF`, and WAL cannot go to MEMORY directly.
    raw.pragma('journal_mode = DELETE');
    if (raw.pragma('journal_mode = MEMORY', { simple: true }) !== 'memory') throw new Error('bulkSqlite: could not leave WAL mode');
    raw.pragma('synchronous = OFF');
    raw.pragma('cache_size = -1048576');
    raw.pragma('temp_store = MEMORY');
    raw.pragma('foreign_keys = ON');
    const tables = POST_TABLES.map((t) => `'${t}'`).join(', ');
    const deferred = raw
      .prepare(`select type, name, sql from sqlite_master where sql is not null and (
        (type = 'index' and tbl_name in (${tables})) or (type = 'trigger' and name in (${DEFERRED_TRIGGERS})))`)
      .all() as Array<{ type: string; name: string; sql: string }>;
    for (const d of deferred) raw.exec(`drop ${d.type} ${d.name}`);
    const statements = new Map<string, BetterSqlite3.Statement>();
    const insert = (table: string, row: Record<string, unknown>) => {
      const columns = Object.keys(row);
      const key = `${table}(${columns.join(',')})`;
      let statement = statements.get(key);
      if (!statement) {
        statement = raw.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
        statements.set(key, statement);
      }
      // better-sqlite3 binds numbers, strings and null: booleans as SQLite stores them.
      statement.run(columns.map((c) => (typeof row[c] === 'boolean' ? (row[c] ? 1 : 0) : (row[c] ?? null))));
    };
    const write = raw.transaction((chunk: PlannedPost[]) => {
      const byTable = postTableRows(
        chunk.map((p) => p.post),
        chunk.flatMap((p) => p.categoryLinks),
        chunk.flatMap((p) => p.tagLinks),
      );
      for (const table of POST_TABLES) for (const row of byTable[table]) insert(table, row as Record<string, unknown>);
    });
    let chunk: PlannedPost[] = [];
    for (const p of rows) {
      chunk.push(p);
      if (chunk.length === BULK_CHUNK) {
        write(chunk);
        onChunk(chunk.length);
        chunk = [];
      }
    }
    if (chunk.length) {
      write(chunk);
      onChunk(chunk.length);
    }
    const t0 = performance.now();
    raw.transaction(() => {
      for (const d of deferred) if (d.type === 'index') raw.exec(d.sql);
      raw.exec(`insert into contents_fts(rowid, title, slug, body_text)
        select b.content_id, c.title, replace(c.slug, '-', ' '), b.body_text from content_bodies b join contents c on c.id = b.content_id order by b.content_id`);
      for (const statement of rebuildLinkLists('sqlite')) raw.exec(statement);
      for (const d of deferred) if (d.type === 'trigger') raw.exec(d.sql);
    })();
    log(`indexes and full-text table built in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    raw.pragma('optimize');
    raw.exec('analyze');
    raw.pragma('journal_mode = WAL');
  } finally {
    raw.close();
  }
}

/**
 * The context of a fill stopped before its end (every chunk is its own transaction, so the file
 * holds whole chunks): a new token, the middle published post, and the two search words of the
 * full plan with their document frequencies counted in the index.
 */
async function contextOfPartial(posts: number, common: string, rare: string) {
  const at = where(posts);
  const database = connectDatabase({ databaseUrl: at.databaseUrl });
  const db = database.db;
  try {
    const count = async (status?: string) =>
      Number(
        (
          await db
            .selectFrom('contents')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .$if(status !== undefined, (q) => q.where('status', '=', status as 'published'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const [all, published] = [await count(), await count('published')];
    const middle = await db
      .selectFrom('contents')
      .select(['id', 'slug', 'site_id', 'author_id'])
      .where('status', '=', 'published')
      .orderBy('id')
      .offset(Math.floor(published / 2))
      .limit(1)
      .executeTakeFirstOrThrow();
    // The posts' author is the site's owner (planBlogStream).
    const site = { id: middle.site_id, owner: middle.author_id as string };
    const token = await createToken(db, { siteId: site.id, userId: site.owner, name: 'bench (partial fill)', scopes: 'all' });
    const df = async (word: string) =>
      Number(
        (dialectOf(db).fullText === 'fts5'
          ? await sql<{ n: number }>`select count(*) as n from contents_fts where contents_fts match ${`"${word}"`}`.execute(db)
          : await sql<{ n: number }>`select count(*) as n from contents where search_vector @@ to_tsquery('simple', ${word})`.execute(db)
        ).rows[0]?.n ?? 0,
      );
    if (dialectOf(db).name === 'sqlite') await sql`analyze`.execute(db);
    const context = {
      postId: middle.id,
      postSlug: middle.slug,
      searchCommon: common,
      searchCommonPosts: await df(common),
      searchRare: rare,
      searchRarePosts: await df(rare),
      posts: all,
      published,
      token: token.token,
      siteId: site.id,
      bodyChars: Number(process.env.BENCH_BODY_CHARS ?? 1000),
      partialFill: true,
    };
    writeFileSync(at.contextFile, JSON.stringify(context, null, 2));
    log(JSON.stringify({ ...context, token: undefined }));
  } finally {
    await database.close();
  }
}

interface Row {
  path: string;
  url: string;
  p50: number;
  p99: number;
  rps: number;
  cpuMs: number | null;
}

async function measureAll(posts: number) {
  const at = where(posts);
  if (!existsSync(at.contextFile)) throw new Error(`no ${at.contextFile}: run \`tsx bench/million.ts fill ${posts}\` first`);
  const ctx = JSON.parse(readFileSync(at.contextFile, 'utf8')) as Record<string, string | number>;
  const durationSec = Number(process.env.BENCH_DURATION ?? 5);
  const port = await freePort();
  const { REDIS_URL: _redis, PUBLIC_URL: _publicUrl, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    NODE_ENV: 'production',
    DATABASE_URL: at.databaseUrl,
    CAIRN_DATA_DIR: DIR,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_PUBLIC_MAX: '10000000',
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
  };
  const base = `http://127.0.0.1:${port}`;
  const server = startChild('cairn server', [...serverNodeFlags(ROOT), path.join(ROOT, 'dist', 'server.js')], env, ROOT);
  try {
    await waitForHttp(server, `${base}/health`, 120_000);
    const published = Number(ctx.published);
    const deepPage = Math.floor(Number(ctx.posts) / 2 / 15);
    const partial = ctx.partialFill ? `, fill stopped at ${String(ctx.posts)} of ${posts}` : '';
    // The deep page's cursor: the `next` link of the page just before it (offset paging reads it once).
    const before = (await (await fetch(`${base}/v1/contents?page=${deepPage - 1}`, { headers: { authorization: `Bearer ${String(ctx.token)}` } })).json()) as {
      meta?: { nextCursor?: string };
    };
    const paths: Array<[string, string]> = [
      ['list page 1', '/v1/contents'],
      [`list page ${deepPage} (offset)`, `/v1/contents?page=${deepPage}`],
      ...(before.meta?.nextCursor
        ? ([[`list page ${deepPage} (cursor)`, `/v1/contents?cursor=${encodeURIComponent(before.meta.nextCursor)}`]] as Array<[string, string]>)
        : []),
      ['read by id', `/v1/contents/${String(ctx.postId)}`],
      ['read by slug', `/v1/contents/slug/${encodeURIComponent(String(ctx.postSlug))}`],
      [`search rare "${String(ctx.searchRare)}" (${String(ctx.searchRarePosts)} posts)`, `/v1/contents/search?q=${encodeURIComponent(String(ctx.searchRare))}`],
      [
        `search common "${String(ctx.searchCommon)}" (${String(ctx.searchCommonPosts)} posts)`,
        `/v1/contents/search?q=${encodeURIComponent(String(ctx.searchCommon))}`,
      ],
    ];
    const rows: Row[] = [];
    for (const [name, p] of paths) {
      const target = { url: `${base}${p}`, method: 'GET', headers: { authorization: `Bearer ${String(ctx.token)}` } };
      const problem = await preflight(target);
      if (problem) throw new Error(`${name}: ${problem}`);
      const m = await measure(target, { connections: 10, durationSec, warmupSec: 1 }, { serverPid: server.pid, ourPids: [server.pid] });
      if (m.non2xx || m.errors || m.timeouts) throw new Error(`${name}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts`);
      rows.push({ path: name, url: p, p50: m.p50Ms, p99: m.p99Ms, rps: m.reqPerSec, cpuMs: m.cpuMsPerReq });
    }
    const dbName = at.pgAdmin ? 'PostgreSQL' : 'SQLite';
    log(
      `\n${dbName} (node ${serverNodeFlags(ROOT).join(' ')}), ${String(ctx.posts)} posts${partial} (${published} published, bodies ~${String(ctx.bodyChars)} chars), 10 connections, ${durationSec} s each; load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; server RSS ${String(rssMb(server.pid))} MB\n`,
    );
    log('| path | p50 ms | p99 ms | req/s | CPU ms/req |');
    log('|---|---:|---:|---:|---:|');
    for (const r of rows) log(`| ${r.path} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.rps.toFixed(0)} | ${r.cpuMs?.toFixed(2) ?? '-'} |`);
    mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(
      path.join(ROOT, 'bench', 'results', `million-${dbName.toLowerCase()}-${posts}.json`),
      JSON.stringify({ posts: ctx.posts, database: dbName, bodyChars: ctx.bodyChars, nodeFlags: serverNodeFlags(ROOT), loadavg: os.loadavg(), rows }, null, 2),
    );
  } finally {
    await stopChild(server);
  }
}

const [command, postsArg, bodyArg] = process.argv.slice(2);
const posts = Number(postsArg ?? BLOG.posts);
if (!Number.isInteger(posts) || posts < 100) throw new Error(`posts must be an integer of at least 100, got ${postsArg}`);
if (command === 'fill') await fill(posts, Number(bodyArg ?? BLOG.bodyChars));
else if (command === 'measure') await measureAll(posts);
else if (command === 'context') await contextOfPartial(posts, String(bodyArg), String(process.argv[5]));
else throw new Error('usage: tsx bench/million.ts fill|measure <posts> [bodyChars]');
