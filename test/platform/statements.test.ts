import pg from 'pg';
import { DefaultQueryExecutor, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/app.js';
import type { ApiResponse } from '../helpers/http.js';
import { useTestApp } from '../helpers/suite.js';

/**
 * What a request costs in statements (issue 37, decisions PF5): each one is a round trip to
 * PostgreSQL, and with it a parse and a plan unless the session keeps the statement named.
 * Recorded under Kysely's executor, where every statement of the app passes (a transaction's
 * `begin` and `commit` go to the driver directly and are not counted).
 */
const ctx = useTestApp();
const base = Object.getPrototypeOf(DefaultQueryExecutor.prototype) as { executeQuery(q: CompiledQuery): Promise<unknown> };
const executeQuery = base.executeQuery;
let recording: string[] | null = null;

async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  recording = seen;
  try {
    await run();
  } finally {
    recording = null;
  }
  return seen.map((s) => s.replace(/\s+/g, ' ').slice(0, 60));
}

beforeAll(() => {
  base.executeQuery = function (this: unknown, q: CompiledQuery) {
    recording?.push(q.sql);
    return executeQuery.call(this, q);
  };
});
afterAll(() => {
  base.executeQuery = executeQuery;
});

const MARKDOWN = 'An [outside link](https://example.org/a) and [one of ours](/about).\n\nA second paragraph.';

describe('statements per request (issue 37)', () => {
  it('a list page counts its total in its own statement, and counts on its own only past its last page (decisions PF14)', async () => {
    const api = await ctx.site();
    const tag = (await api.post('/v1/tags', { name: 'Counted tag' })).body.data.id as number;
    for (const [title, extra] of [
      ['One', { status: 'published', tagIds: [tag] }],
      ['Two', {}],
      ['Three', { tagIds: [tag] }],
    ] as const)
      expect((await api.post('/v1/contents', { type: 'post', title, bodyMarkdown: MARKDOWN, ...extra })).status).toBe(201);
    const other = await ctx.site();
    expect((await other.post('/v1/contents', { type: 'post', title: 'Elsewhere', bodyMarkdown: MARKDOWN })).status).toBe(201);
    expect((await api.get('/v1/contents?limit=1')).status).toBe(200); // the token and validators warm
    const page = async (query: string) => {
      let body: any;
      const seen = await statementsOf(async () => {
        body = (await api.get(`/v1/contents?${query}`)).body;
      });
      return [seen.length, body.data.map((c: { title: string }) => c.title), body.meta.total];
    };
    // From the per-status counters (N12), then by the filters: one statement while the page has rows.
    expect(await page('limit=2')).toEqual([1, ['Three', 'Two'], 3]);
    expect(await page('limit=2&page=2')).toEqual([1, ['One'], 3]);
    expect(await page('limit=2&page=3')).toEqual([2, [], 3]);
    expect(await page('status=published')).toEqual([1, ['One'], 1]);
    expect(await page(`tagIds[]=${tag}&limit=1`)).toEqual([1, ['Three'], 2]);
    expect(await page(`tagIds[]=${tag}&limit=1&page=3`)).toEqual([2, [], 2]);
    expect(await page(`tagIds[]=${tag + 1000}`)).toEqual([2, [], 0]);
    expect((await other.get('/v1/contents')).body.meta.total).toBe(1);
  });

  it("a create runs its site, row, body, outbound links and revision: the author comes back with the row, the slug is the insert's own check; on PostgreSQL the row and body are one statement", async () => {
    const api = await ctx.site();
    // The token and the route's validators are warm: only the create's own work is counted.
    expect((await api.post('/v1/contents', { type: 'post', title: 'Warm', bodyMarkdown: MARKDOWN })).status).toBe(201);
    let res: ApiResponse | undefined;
    const seen = await statementsOf(async () => {
      res = await api.post('/v1/contents', { type: 'post', title: 'Counted', bodyMarkdown: MARKDOWN });
    });
    expect(res!.status).toBe(201);
    expect(res!.body.data.slug).toBe('counted');
    expect(seen.map((s) => s.split(' ').slice(0, 3).join(' '))).toEqual([
      'select "default_locale", "enabled_locales",',
      ...(TEST_DIALECT === 'postgres' ? ['with "c" as'] : ['insert into "contents"', 'insert into "content_bodies"']),
      'insert into "content_links_out"',
      'insert into "content_revisions"',
    ]);
    // What the skipped statements would have done still holds: the author's name is the user's (as a
    // read shows it), and the links are the body's, once each.
    const read = (await api.get(`/v1/contents/${res!.body.data.id}`)).body;
    expect(read.author.fullName).toEqual(expect.any(String));
    expect(res!.body.data.author).toEqual(read.author);
    const links = await ctx.app.database.db
      .selectFrom('content_links_out')
      .select(['target_url', 'internal'])
      .where('content_id', '=', Number(res!.body.data.id))
      .orderBy('target_url')
      .execute();
    expect(links.map((l) => [l.target_url, Boolean(l.internal)])).toEqual([
      ['https://example.org/a', false],
      ['https://example.test/about', true],
    ]);
  });

  it('a read by id is one statement, and its body is the stored JSON', async () => {
    const api = await ctx.site();
    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hello "there"' }] }] };
    const id = (await api.post('/v1/contents', { type: 'post', title: 'Read', body: doc })).body.data.id as number;
    expect((await api.get(`/v1/contents/${id}`)).status).toBe(200);
    let body: unknown;
    const seen = await statementsOf(async () => {
      body = (await api.get(`/v1/contents/${id}`)).body;
    });
    expect(seen).toHaveLength(1);
    expect((body as { body: unknown }).body).toEqual(doc);
  });
});

describe.skipIf(TEST_DIALECT !== 'postgres')('named statements on PostgreSQL (decisions PF5)', () => {
  it("a prepared query's statement is sent named and parsed once per session; other statements stay unnamed", async () => {
    const api = await ctx.site();
    const id = (await api.post('/v1/contents', { type: 'post', title: 'Named', bodyMarkdown: MARKDOWN })).body.data.id as number;
    // What node-postgres puts on the wire: Parse (a statement's text, with its name or unnamed) and Bind (runs one).
    const connection = (pg as unknown as { Connection: { prototype: Record<string, (...args: any[]) => unknown> } }).Connection.prototype;
    const { parse, bind } = connection;
    const parsed: Array<{ name?: string; text: string }> = [];
    const bound: string[] = [];
    connection.parse = function (this: unknown, query: { name?: string; text: string }) {
      parsed.push({ name: query.name || undefined, text: query.text });
      return parse!.call(this, query);
    };
    connection.bind = function (this: unknown, config: { statement?: string }) {
      bound.push(config.statement ?? '');
      return bind!.call(this, config);
    };
    try {
      for (let i = 0; i < 3; i++) expect((await api.get(`/v1/contents/${id}`)).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await api.get('/v1/site/info')).status).toBe(200);
      expect((await api.get('/v1/tags?limit=5')).status).toBe(200);
    } finally {
      Object.assign(connection, { parse, bind });
    }
    const detail = parsed.find((p) => p.text.startsWith('select "contents"."id"'));
    const name = detail?.name ?? bound.find((b) => b.startsWith('cairn_'));
    expect(name).toMatch(/^cairn_\d+$/);
    // Three runs on the one session the sequential requests get: bound three times, parsed at most once.
    expect(bound.filter((b) => b === name)).toHaveLength(3);
    expect(parsed.filter((p) => p.name === name).length).toBeLessThanOrEqual(1);
    // The body is read as its JSON text (no parse in node-postgres, no stringify in the serializer).
    if (detail) expect(detail.text).toContain('"cb"."body"::text');
    // The site row of the site-settings routes is a prepared query too (decisions PF25): bound by name twice.
    const site = parsed.find((p) => p.text.startsWith('select * from "sites"'))?.name ?? bound.find((b) => b.startsWith('cairn_') && b !== name);
    expect(site).toMatch(/^cairn_\d+$/);
    expect(bound.filter((b) => b === site)).toHaveLength(2);
    // A statement not built by a prepared query (the tags list's) is parsed unnamed on every run.
    const tags = parsed.filter((p) => p.text.startsWith('select') && p.text.includes('from "tags"'));
    expect(tags.length).toBeGreaterThan(0);
    expect(tags.every((p) => p.name === undefined)).toBe(true);
  });
});

describe.skipIf(TEST_DIALECT !== 'postgres')('concurrent creates of one site on PostgreSQL (decisions PF6)', () => {
  /** A session of its own on the test schema, and its counter slot (migration 0045). */
  async function session(): Promise<{ client: pg.Client; slot: number }> {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, options: `-c search_path=${ctx.config.pgSchema}` });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    return { client, slot: rows[0]!.pid % 16 };
  }
  const insertPost = (client: pg.Client, siteId: string, title: string) =>
    client.query(
      `insert into contents (site_id, title, slug, status, locale, translation_group, created_at, updated_at)
       values ($1, $2, $2, 'draft', 'en', $2, now(), now())`,
      [siteId, title],
    );

  it("a create does not wait for another session's uncommitted create to count it, and the total stays exact", async () => {
    const api = await ctx.site();
    const first = await session();
    // A second session on another counter slot (sessions share one when their pids do modulo 16).
    const opened: pg.Client[] = [first.client];
    let second = await session();
    while (second.slot === first.slot) {
      opened.push(second.client);
      second = await session();
    }
    opened.push(second.client);
    try {
      await first.client.query('begin');
      await insertPost(first.client, api.siteId, 'first-uncommitted');
      await second.client.query("set lock_timeout = '2s'");
      await second.client.query('begin');
      // With one counter row per site and status this insert waited for the first to end (lock timeout).
      await insertPost(second.client, api.siteId, 'second-concurrent');
      await second.client.query('commit');
      await first.client.query('commit');
    } finally {
      await Promise.all(opened.map((c) => c.end()));
    }
    const list = await api.get('/v1/contents?status=draft');
    expect(list.status).toBe(200);
    expect(list.body.meta.total).toBe(2);
    expect((await api.get('/v1/contents')).body.meta.total).toBe(2);
  });
});
