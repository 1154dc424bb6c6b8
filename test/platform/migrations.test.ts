import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { searchContents } from '../../src/modules/contents/contents.search.js';
import { createSite } from '../../src/modules/sites/sites.service.js';
import { adminQuery, TEST_DIALECT } from '../helpers/app.js';

/**
 * Migrations that move data keep every row: a database as the release before left it, filled,
 * then migrated to the latest schema.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function freshDatabase(): Promise<Database> {
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (pgUrl) {
    const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    await adminQuery(pgUrl, `create schema ${schema}`);
    const database = connectDatabase({ databaseUrl: pgUrl, pgSchema: schema });
    cleanups.push(async () => {
      await database.close();
      await adminQuery(pgUrl, `drop schema if exists ${schema} cascade`);
    });
    return database;
  }
  const file = path.join(os.tmpdir(), `cairn-migration-${randomUUID()}.db`);
  const database = connectDatabase({ databaseUrl: file });
  cleanups.push(async () => {
    await database.close();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  });
  return database;
}

const none = { apply: (qb: any) => qb, args: {} };

describe('migration 0025: content bodies in their own table (issue 15 item 5)', () => {
  it('copies every body, drops the columns from contents, and search finds what it found before', async () => {
    const database = await freshDatabase();
    await migrateTo(database, '0024_site_change_notify');
    const db = database.db as unknown as Kysely<any>;
    const site = await createSite(database.db, { name: 'Old site', domain: 'old.example' });
    const other = await createSite(database.db, { name: 'Other site', domain: 'other.example' });
    const at = '2024-05-01T10:00:00.000Z';
    const rows = [
      {
        site: site.id,
        title: 'Heron watch',
        slug: 'heron-watch',
        body: '{"type":"doc","content":[]}',
        html: '<p>Grey heron</p>',
        text: 'The grey heron waits by the river',
      },
      { site: site.id, title: 'Empty one', slug: 'empty-one', body: null, html: '', text: '' },
      {
        site: other.id,
        title: 'Kestrel notes',
        slug: 'kestrel-notes',
        body: '{"type":"doc"}',
        html: '<p>Kestrel</p>',
        text: 'A kestrel hovers over the meadow.',
      },
    ];
    const ids: number[] = [];
    for (const r of rows) {
      const { id } = await db
        .insertInto('contents')
        .values({
          site_id: r.site,
          type: 'post',
          title: r.title,
          slug: r.slug,
          status: 'published',
          locale: 'en',
          translation_group: randomUUID(),
          body: r.body,
          body_html: r.html,
          body_text: r.text,
          published_at: at,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(Number(id));
    }
    expect(await migrateToLatest(database)).toContain('0025_content_bodies');

    const bodies = await db.selectFrom('content_bodies').select(['content_id', 'site_id', 'body', 'body_html', 'body_text']).orderBy('content_id').execute();
    const asText = (v: unknown) => (v === null ? null : typeof v === 'string' ? JSON.parse(v) : v);
    expect(bodies.map((b) => ({ ...b, content_id: Number(b.content_id), body: asText(b.body) }))).toEqual(
      rows.map((r, i) => ({ content_id: ids[i], site_id: r.site, body: r.body === null ? null : JSON.parse(r.body), body_html: r.html, body_text: r.text })),
    );
    const columns =
      TEST_DIALECT === 'sqlite'
        ? (await sql<{ name: string }>`select name from pragma_table_info('contents')`.execute(db)).rows.map((r) => r.name)
        : (
            await sql<{
              name: string;
            }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'contents'`.execute(db)
          ).rows.map((r) => r.name);
    expect(columns).toContain('published_at');
    for (const gone of ['body', 'body_html', 'body_text']) expect(columns).not.toContain(gone);

    // The migrated index: body words, title words, slug words, each site its own, with snippets.
    const river = await searchContents(database.db, site.id, 'river', none, { page: 1, limit: 10 });
    expect(river.hits.map((h) => [h.id, h.bodyHighlight])).toEqual([[ids[0], 'The grey heron waits by the <mark>river</mark>']]);
    expect((await searchContents(database.db, site.id, 'watch', none, { page: 1, limit: 10 })).hits.map((h) => h.id)).toEqual([ids[0]]);
    expect((await searchContents(database.db, site.id, 'kestrel', none, { page: 1, limit: 10 })).total).toBe(0);
    expect((await searchContents(database.db, other.id, 'meadow', none, { page: 1, limit: 10 })).hits.map((h) => h.id)).toEqual([ids[2]]);
    if (TEST_DIALECT === 'sqlite') await sql`insert into contents_fts(contents_fts) values('integrity-check')`.execute(db);

    // And it is kept from then on: a body changed after the migration is what search finds.
    await db.updateTable('content_bodies').set({ body_text: 'Now by the lake.' }).where('content_id', '=', ids[0]).execute();
    expect((await searchContents(database.db, site.id, 'river', none, { page: 1, limit: 10 })).total).toBe(0);
    expect((await searchContents(database.db, site.id, 'lake', none, { page: 1, limit: 10 })).hits.map((h) => h.id)).toEqual([ids[0]]);
    // A deleted site takes its contents, their bodies and their index entries.
    await db.deleteFrom('sites').where('id', '=', other.id).execute();
    expect(
      Number(
        (
          await db
            .selectFrom('content_bodies')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(2);
    if (TEST_DIALECT === 'sqlite') {
      expect(Number((await sql<{ n: number }>`select count(*) as n from contents_fts`.execute(db)).rows[0]!.n)).toBe(2);
      await sql`insert into contents_fts(contents_fts) values('integrity-check')`.execute(db);
    }
  }, 60_000);
});
