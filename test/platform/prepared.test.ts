import { describe, expect, it } from 'vitest';
import { prepared } from '../../src/db/prepared.js';
import { createSiteWithToken } from '../helpers/app.js';
import { useTestApp } from '../helpers/suite.js';

const ctx = useTestApp();

type Args = { siteId: string; names?: string[]; exact?: string; newestFirst?: boolean; limit: number };

describe('prepared queries (db/prepared.ts)', () => {
  // Tags of a site, with optional filters: the shapes a prepared list query meets.
  let builds = 0;
  const tagsQuery = prepared(
    (db, p: Args) => {
      builds++;
      let q = db.selectFrom('tags').select(['name']).where('site_id', '=', p.siteId);
      if (p.names) q = q.where('name', 'in', p.names);
      if (p.exact) q = q.where('name', '=', p.exact);
      return q.orderBy('name', p.newestFirst ? 'desc' : 'asc').limit(p.limit);
    },
    { structural: ['newestFirst'] },
  );

  async function seedTags(names: string[]) {
    const site = await createSiteWithToken(ctx.app);
    const at = new Date().toISOString();
    await ctx.app.database.db
      .insertInto('tags')
      .values(
        names.map((name) => ({
          site_id: site.siteId,
          name,
          slug: name,
          locale: 'en',
          translation_group: crypto.randomUUID(),
          description: null,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
    return site.siteId;
  }

  it("binds each run's values into the statement built once per shape", async () => {
    const a = await seedTags(['alpha', 'beta', 'gamma']);
    const b = await seedTags(['delta', 'epsilon']);
    const db = ctx.app.database.db;
    builds = 0;
    expect(await tagsQuery.execute(db, { siteId: a, limit: 10 })).toEqual([{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }]);
    expect(await tagsQuery.execute(db, { siteId: b, limit: 1 })).toEqual([{ name: 'delta' }]);
    expect(builds).toBe(1);
    // Another array length, another optional filter, another structural value: new shapes.
    expect(await tagsQuery.execute(db, { siteId: a, names: ['gamma', 'alpha'], limit: 10 })).toEqual([{ name: 'alpha' }, { name: 'gamma' }]);
    expect(await tagsQuery.execute(db, { siteId: a, names: ['beta'], limit: 10 })).toEqual([{ name: 'beta' }]);
    expect(await tagsQuery.execute(db, { siteId: a, names: ['beta', 'zeta'], limit: 10 })).toEqual([{ name: 'beta' }]);
    expect(await tagsQuery.execute(db, { siteId: a, exact: 'beta', limit: 10 })).toEqual([{ name: 'beta' }]);
    expect(await tagsQuery.execute(db, { siteId: a, newestFirst: true, limit: 2 })).toEqual([{ name: 'gamma' }, { name: 'beta' }]);
    expect(await tagsQuery.execute(db, { siteId: a, newestFirst: false, limit: 2 })).toEqual([{ name: 'alpha' }, { name: 'beta' }]);
    // names[2] (twice), names[1], exact, newestFirst=true, newestFirst=false.
    expect(builds).toBe(6);
    expect(await tagsQuery.executeTakeFirst(db, { siteId: b, exact: 'epsilon', limit: 10 })).toEqual({ name: 'epsilon' });
    expect(await tagsQuery.executeTakeFirst(db, { siteId: b, exact: 'alpha', limit: 10 })).toBeUndefined();
    expect(builds).toBe(6);
  });

  it('keeps at most 256 shapes per query, dropping the oldest', async () => {
    const a = await seedTags(['kept']);
    const db = ctx.app.database.db;
    const names = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? 'kept' : `n${i}`));
    let built = 0;
    const byNames = prepared((d, p: { siteId: string; names: string[] }) => {
      built++;
      return d.selectFrom('tags').select(['name']).where('site_id', '=', p.siteId).where('name', 'in', p.names);
    });
    for (let n = 1; n <= 257; n++) expect(await byNames.execute(db, { siteId: a, names: names(n) })).toEqual([{ name: 'kept' }]);
    expect(built).toBe(257);
    await byNames.execute(db, { siteId: a, names: names(257) });
    expect(built).toBe(257);
    // Shape 1 was the oldest when shape 257 came in: built again.
    await byNames.execute(db, { siteId: a, names: names(1) });
    expect(built).toBe(258);
  });

  it('compiles the same SQL as building the query each time, and runs inside a transaction', async () => {
    const a = await seedTags(['one', 'two']);
    const db = ctx.app.database.db;
    const direct = db.selectFrom('tags').select(['name']).where('site_id', '=', a).where('name', 'in', ['two']).orderBy('name', 'asc').limit(3).compile();
    const compiled = tagsQuery.compile(db, { siteId: a, names: ['two'], limit: 3 });
    expect(compiled.sql).toBe(direct.sql);
    expect(compiled.parameters).toEqual(direct.parameters);
    const inTx = await db.transaction().execute((tx) => tagsQuery.execute(tx, { siteId: a, limit: 5 }));
    expect(inTx).toEqual([{ name: 'one' }, { name: 'two' }]);
  });
});
