import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { UNIQUE_CONSTRAINTS } from '../../src/db/unique-constraints.js';
import { toErrorBody } from '../../src/plugins/errors.js';
import { TEST_DIALECT } from '../helpers/app.js';
import { expectErrorShape } from '../helpers/http.js';
import { type SiteClient, useTestApp } from '../helpers/suite.js';

const ctx = useTestApp();
const db = () => ctx.app.database.db as any;

/** Every unique index of the live schema but primary keys: `table(col,...)` on SQLite, the index name on PostgreSQL. */
async function uniqueIndexes(): Promise<string[]> {
  if (TEST_DIALECT === 'postgres') {
    const { rows } = await sql<{ name: string }>`
      select i.relname as name from pg_index x
      join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid join pg_namespace n on n.oid = t.relnamespace
      where x.indisunique and not x.indisprimary and n.nspname = current_schema()`.execute(db());
    return rows.map((r) => r.name).sort();
  }
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db());
  const out: string[] = [];
  for (const { name: table } of tables.rows) {
    const indexes = await sql<{ name: string; unique: number; origin: string }>`select * from pragma_index_list(${table})`.execute(db());
    for (const index of indexes.rows.filter((i) => i.unique && i.origin !== 'pk')) {
      const columns = await sql<{ name: string }>`select name from pragma_index_info(${index.name}) order by seqno`.execute(db());
      out.push(`${table}(${columns.rows.map((c) => c.name).join(',')})`);
    }
  }
  return out.sort();
}

/**
 * A copy of one of the site's rows with a new id and the given columns changed, inserted
 * directly, as a request would that lost the race with the service's own check: the database's
 * error, as the errors plugin answers it.
 */
async function duplicate(table: string, siteColumn: string, siteId: string, change: Record<string, unknown> = {}) {
  const row = await db().selectFrom(table).selectAll().where(siteColumn, '=', siteId).executeTakeFirstOrThrow();
  const copy: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    // Generated columns (PostgreSQL's search columns of contents) are computed, not written.
    if (column.startsWith('search_')) continue;
    copy[column] = value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value;
  }
  if (typeof row.id === 'string') copy.id = randomUUID();
  else delete copy.id;
  Object.assign(copy, change);
  const error = await db()
    .insertInto(table)
    .values(copy)
    .execute()
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(error, `the copy of a ${table} row was stored`).not.toBeNull();
  expect((error as { code?: string }).code).toBe(TEST_DIALECT === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT_UNIQUE');
  return toErrorBody(error as never);
}

function expectTaken(body: any, code: string, field: string) {
  expectErrorShape(body, 422, code);
  expect(Object.keys(body.errors)).toEqual([field]);
}

async function created(api: SiteClient, path: string, body: Record<string, unknown>) {
  const res = await api.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

describe('unique constraints (issue 29 item 4)', () => {
  it('lists every unique index of the migrations in the table of db/unique-constraints.ts', async () => {
    const described = UNIQUE_CONSTRAINTS.map((c) => (TEST_DIALECT === 'postgres' ? c.name : `${c.table}(${c.columns.join(',')})`)).sort();
    expect(await uniqueIndexes()).toEqual(described);
  });

  it('answers a clash on each constraint a request can reach with its field and code, the same on both databases', async () => {
    const api = await ctx.site();
    const site = api.siteId;
    await created(api, '/v1/tags', { name: 'Shoes', slug: 'shoes' });
    expectTaken(await duplicate('tags', 'site_id', site, { name: 'Boots' }), 'SLUG_TAKEN', 'slug');
    expectTaken(await duplicate('tags', 'site_id', site, { slug: 'boots' }), 'NAME_TAKEN', 'name');
    await created(api, '/v1/categories', { name: 'Guides' });
    expectTaken(await duplicate('categories', 'site_id', site), 'SLUG_TAKEN', 'slug');
    await created(api, '/v1/variables', { key: 'site.phone', label: 'Phone', value: '+49 30 1234567' });
    expectTaken(await duplicate('variables', 'site_id', site), 'KEY_TAKEN', 'key');
    await created(api, '/v1/single-types', { slug: 'imprint', name: 'Imprint', data: {} });
    expectTaken(await duplicate('single_types', 'site_id', site), 'SLUG_TAKEN', 'slug');
    await created(api, '/v1/contents', { type: 'post', title: 'A post', bodyMarkdown: 'Text.' });
    expectTaken(await duplicate('contents', 'site_id', site), 'SLUG_TAKEN', 'slug');
    await created(api, '/v1/redirects', { sourcePath: '/old', targetUrl: '/new' });
    expectTaken(await duplicate('redirects', 'site_id', site), 'SOURCE_PATH_TAKEN', 'sourcePath');
    await created(api, '/v1/sitemap/entries', { url: '/about' });
    expectTaken(await duplicate('sitemap_entries', 'site_id', site), 'UNIQUE_VIOLATION', 'url');
    await created(api, '/v1/site-blocks', { name: 'About', type: 'page', path: '/company/about' });
    expectTaken(await duplicate('site_blocks', 'site_id', site, { path: '/company/team' }), 'SLUG_TAKEN', 'slug');
    expectTaken(await duplicate('site_blocks', 'site_id', site, { slug: 'team' }), 'PATH_TAKEN', 'path');
    await created(api, '/v1/forms', { name: 'Contact', schema: [{ name: 'email', type: 'email', required: true }] });
    expectTaken(await duplicate('forms', 'site_id', site), 'SLUG_TAKEN', 'slug');
    // A folder name race answered KEY_TAKEN on SQLite and NAME_TAKEN on PostgreSQL before the table.
    await created(api, '/v1/media-folders', { name: 'Photos' });
    expectTaken(await duplicate('media_folders', 'site_id', site, { name: 'photos' }), 'NAME_TAKEN', 'name');
    await created(api, '/v1/roles', { name: 'Reviewer', scopes: ['contents.view'] });
    expectTaken(await duplicate('roles', 'site_id', site, { name: 'Reviewer 2' }), 'NAME_TAKEN', 'name');
    const user = await created(api, '/v1/users', { fullName: 'Ada Lovelace', email: 'ada@example.com' });
    expectTaken(await duplicate('users', 'site_id', site, { email: user.email, is_owner: TEST_DIALECT === 'postgres' ? false : 0 }), 'EMAIL_TAKEN', 'email');
    // A site's slug is chosen free by the service; a race on it is still a slug clash.
    expectTaken(await duplicate('sites', 'id', site, { public_key: `pk_${randomUUID()}` }), 'SLUG_TAKEN', 'slug');
  });

  it('answers a clash on a value no request sends (a site key, a settings row) as UNIQUE_VIOLATION on body', async () => {
    const api = await ctx.site();
    expectTaken(await duplicate('sites', 'id', api.siteId, { slug: `s-${randomUUID()}` }), 'UNIQUE_VIOLATION', 'body');
    expect((await api.get('/v1/seo/settings')).status).toBe(200);
    expectTaken(await duplicate('seo_settings', 'site_id', api.siteId), 'UNIQUE_VIOLATION', 'body');
  });
});
