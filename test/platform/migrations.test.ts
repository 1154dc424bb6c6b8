import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { searchContents } from '../../src/modules/contents/contents.search.js';
import { createToken } from '../../src/modules/api-tokens/api-tokens.service.js';
import { hashSecret, verifyToken } from '../../src/modules/api-tokens/api-tokens.auth.js';
import { ALL_SCOPES } from '../../src/shared/scopes.js';
import { adminQuery, allScopesExcept, createMigratedSchema, TEST_DIALECT } from '../helpers/app.js';

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

/** A site and its first user as the releases before 0026 made them (no roles yet). */
async function oldSite(
  db: Kysely<any>,
  name: string,
  users: Array<{ name: string; email?: string; at: string }> = [{ name: 'Owner', at: '2024-01-01T00:00:00.000Z' }],
) {
  const id = randomUUID();
  const at = '2024-01-01T00:00:00.000Z';
  const bool = (v: boolean) => (TEST_DIALECT === 'postgres' ? v : Number(v));
  await db
    .insertInto('sites')
    .values({
      id,
      name,
      domain: `${id.slice(0, 8)}.example`,
      slug: `site-${id.slice(0, 8)}`,
      timezone: 'UTC',
      is_active: bool(true),
      show_branding: bool(true),
      public_key: `pk_${randomUUID().replace(/-/g, '')}`,
      default_locale: 'en',
      multi_language_enabled: bool(false),
      enabled_locales: '["en"]',
      detection_enabled: bool(false),
      detection_order: '["cookie","browser"]',
      cookie_name: 'cairn_locale',
      cookie_max_age: 365,
      redirect_to_default: bool(false),
      hide_default_locale: bool(true),
      created_at: at,
      updated_at: at,
    })
    .execute();
  const userIds: string[] = [];
  for (const u of users) {
    const userId = randomUUID();
    userIds.push(userId);
    await db
      .insertInto('users')
      .values({ id: userId, site_id: id, full_name: u.name, email: u.email ?? null, created_at: u.at, updated_at: u.at })
      .execute();
  }
  return { id, userIds };
}

describe('migration 0025: content bodies in their own table (issue 15 item 5)', () => {
  it('copies every body, drops the columns from contents, and search finds what it found before', async () => {
    const database = await freshDatabase();
    await migrateTo(database, '0024_site_change_notify');
    const db = database.db as unknown as Kysely<any>;
    const site = await oldSite(database.db as unknown as Kysely<any>, 'Old site');
    const other = await oldSite(database.db as unknown as Kysely<any>, 'Other site');
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

describe('migration 0026: users, roles and tokens (issue 30)', () => {
  it("seeds each site's five roles, makes the oldest user owner and the others administrators, so no token loses power", async () => {
    const database = await freshDatabase();
    await migrateTo(database, '0025_content_bodies');
    const db = database.db as unknown as Kysely<any>;
    const a = await oldSite(db, 'A', [
      { name: 'Second', email: 'Ada@Example.TEST', at: '2024-02-01T00:00:00.000Z' },
      { name: 'First', at: '2024-01-01T00:00:00.000Z' },
      { name: 'Third', email: 'ada@example.test', at: '2024-03-01T00:00:00.000Z' },
    ]);
    const b = await oldSite(db, 'B', [{ name: 'Only', email: 'ada@example.test', at: '2024-05-01T00:00:00.000Z' }]);
    const secret = 'S'.repeat(43);
    const insertToken = async (siteId: string, userId: string, scopes: readonly string[]) => {
      const id = randomUUID();
      await db
        .insertInto('api_tokens')
        .values({
          id,
          site_id: siteId,
          user_id: userId,
          name: 't',
          kind: 'management',
          secret_hash: hashSecret(secret),
          scopes: JSON.stringify(scopes),
          created_at: '2024-06-01T00:00:00.000Z',
        })
        .execute();
      return `cairn_${id.replace(/-/g, '')}_${secret}`;
    };
    const ownerToken = await insertToken(a.id, a.userIds[1]!, ALL_SCOPES);
    const otherToken = await insertToken(a.id, a.userIds[0]!, allScopesExcept('sites.delete'));

    expect(await migrateToLatest(database)).toContain('0026_users_roles');

    const roles = await db.selectFrom('roles').select(['site_id', 'slug', 'is_system', 'scopes']).orderBy('site_id').orderBy('slug').execute();
    expect(roles.filter((r) => r.site_id === a.id).map((r) => r.slug)).toEqual(['administrator', 'author', 'editor', 'owner', 'viewer']);
    expect(roles.filter((r) => r.site_id === b.id)).toHaveLength(5);
    const scopesOf = (slug: string) =>
      JSON.parse(
        typeof roles.find((r) => r.site_id === a.id && r.slug === slug)!.scopes === 'string'
          ? roles.find((r) => r.site_id === a.id && r.slug === slug)!.scopes
          : JSON.stringify(roles.find((r) => r.site_id === a.id && r.slug === slug)!.scopes),
      );
    expect(scopesOf('owner')).toHaveLength(ALL_SCOPES.length);
    expect(scopesOf('administrator')).toEqual(ALL_SCOPES.filter((s) => s !== 'sites.delete'));
    expect(scopesOf('author')).toEqual([
      'contents.view',
      'contents.create',
      'contents.update.own',
      'contents.delete.own',
      'contents.publish.own',
      'media.view',
      'media.upload',
      'categories.view',
      'tags.view',
      'site_blocks.view',
    ]);
    expect(roles.filter((r) => Boolean(r.is_system)).map((r) => r.slug)).toEqual(['owner', 'owner']);

    const users = await db
      .selectFrom('users as u')
      .innerJoin('roles as r', 'r.id', 'u.role_id')
      .select(['u.id', 'u.full_name', 'u.email', 'u.is_owner', 'u.is_active', 'r.slug', 'r.site_id'])
      .orderBy('u.created_at')
      .execute();
    expect(users.map((u) => [u.full_name, u.slug, Boolean(u.is_owner), Boolean(u.is_active), u.email, u.site_id])).toEqual([
      ['First', 'owner', true, true, null, a.id],
      ['Second', 'administrator', false, true, 'ada@example.test', a.id],
      ['Third', 'administrator', false, true, null, a.id],
      ['Only', 'owner', true, true, 'ada@example.test', b.id],
    ]);
    const tokens = await db.selectFrom('api_tokens').select(['updated_at', 'created_at', 'description', 'regenerated_at']).execute();
    expect(
      tokens.every((t) => new Date(t.updated_at).getTime() === new Date(t.created_at).getTime() && t.description === null && t.regenerated_at === null),
    ).toBe(true);

    // Every token acts with the scopes it had: the owner's all of them, another user's all it held.
    expect((await verifyToken(database.db, ownerToken)).scopes.size).toBe(ALL_SCOPES.length);
    expect((await verifyToken(database.db, otherToken)).scopes.size).toBe(ALL_SCOPES.length - 1);
    // A second owner of one site, or a second user with the same e-mail, is refused by the database itself.
    await expect(
      db
        .updateTable('users')
        .set({ is_owner: TEST_DIALECT === 'postgres' ? true : 1 })
        .where('id', '=', a.userIds[0]!)
        .execute(),
    ).rejects.toThrow();
    await expect(db.updateTable('users').set({ email: 'ada@example.test' }).where('id', '=', a.userIds[2]!).execute()).rejects.toThrow();
    // The migrated owner makes tokens as before.
    const made = await createToken(database.db, { siteId: a.id, userId: a.userIds[1]!, scopes: 'all' });
    expect(made.scopes).toHaveLength(ALL_SCOPES.length);
  }, 60_000);
});

describe.skipIf(TEST_DIALECT !== 'postgres')('the test schema template (test/helpers/app.ts)', () => {
  /** What a schema holds, with its own name taken out: columns, constraints, indexes, triggers, functions and the migrator's rows. */
  async function shape(url: string, schema: string): Promise<string[]> {
    const database = connectDatabase({ databaseUrl: url, pgSchema: schema });
    try {
      const { rows } = await sql<{ line: string }>`
        select format('column %s.%s %s %s %s', table_name, column_name, data_type, is_nullable, coalesce(column_default, '')) as line
          from information_schema.columns where table_schema = ${schema}
        union all select format('constraint %s %s', conname, pg_get_constraintdef(c.oid))
          from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = ${schema}
        union all select format('index %s', indexdef) from pg_indexes where schemaname = ${schema}
        union all select format('trigger %s %s', tgname, pg_get_triggerdef(t.oid))
          from pg_trigger t join pg_class r on r.oid = t.tgrelid join pg_namespace n on n.oid = r.relnamespace
          where n.nspname = ${schema} and not t.tgisinternal
        union all select format('function %s %s', p.proname, md5(p.prosrc))
          from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = ${schema}
        union all select format('migration %s', name) from kysely_migration`.execute(database.db);
      return rows.map((r) => r.line.replaceAll(schema, '<schema>')).sort();
    } finally {
      await database.close();
    }
  }

  it('builds the schema the migrations build', async () => {
    const url = process.env.TEST_DATABASE_URL!;
    const migrated = `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    const templated = `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    await adminQuery(url, `create schema ${migrated}`);
    await createMigratedSchema(url, templated);
    try {
      const database = connectDatabase({ databaseUrl: url, pgSchema: migrated });
      await migrateToLatest(database);
      await database.close();
      const expected = await shape(url, migrated);
      expect(expected.filter((l) => l.startsWith('index ')).length).toBeGreaterThan(50);
      expect(await shape(url, templated)).toEqual(expected);
    } finally {
      await adminQuery(url, `drop schema if exists ${migrated} cascade; drop schema if exists ${templated} cascade`);
    }
  });
});

describe('a migration that fails half-way', () => {
  const indexesOf = async (db: Kysely<any>) =>
    TEST_DIALECT === 'postgres'
      ? (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`select name from sqlite_schema where type = 'index'`.execute(db)).rows.map((r) => r.name);

  it('leaves nothing of itself behind, so the next start runs it whole (SQLite too: decisions MG1)', async () => {
    const database = await freshDatabase();
    await migrateTo(database, '0035_site_bundles');
    // 0036 makes analytics_sessions_country_idx, then analytics_sessions_device_idx: an index of
    // that name made beforehand (on another table) fails it at its second statement.
    await sql`create index analytics_sessions_device_idx on sites (name)`.execute(database.db);
    await expect(migrateToLatest(database)).rejects.toThrow(/0036_analytics_scan_indexes failed/);
    const after = await indexesOf(database.db);
    expect(after).not.toContain('analytics_sessions_country_idx');
    const recorded = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
    expect(recorded.rows.map((r) => r.name).at(-1)).toBe('0035_site_bundles');

    await sql`drop index analytics_sessions_device_idx`.execute(database.db);
    await migrateToLatest(database);
    const done = await indexesOf(database.db);
    expect(done).toEqual(expect.arrayContaining(['analytics_sessions_country_idx', 'analytics_sessions_device_idx', 'analytics_events_session_idx']));
  });
});

describe.skipIf(TEST_DIALECT !== 'sqlite')('an up-to-date SQLite file', () => {
  it('starts while another process holds the write lock: with nothing pending the migrator only reads (decisions MG1)', async () => {
    const file = path.join(os.tmpdir(), `cairn-migration-lock-${randomUUID()}.db`);
    const first = connectDatabase({ databaseUrl: file });
    await migrateToLatest(first);
    await first.close();
    const again = connectDatabase({ databaseUrl: file, sqliteBusyTimeoutMs: 200 });
    const { default: BetterSqlite3 } = await import('better-sqlite3');
    const other = new BetterSqlite3(file);
    other.exec('begin immediate');
    try {
      expect(await migrateToLatest(again)).toEqual([]);
    } finally {
      other.exec('rollback');
      other.close();
      await again.close();
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
    }
  });
});
