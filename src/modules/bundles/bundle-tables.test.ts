import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../../../test/helpers/app.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { BUNDLE_TABLES, NOT_BUNDLED, NOT_CARRIED } from './bundle-tables.js';

/**
 * A bundle holds "everything a site is" (issue 35): every table of the database is either in
 * the bundle or listed with the reason it is not, and every column of a bundled table is carried
 * or listed likewise. A new table or column fails here until someone decides.
 */
const ctx = useTestApp();

describe('what a site bundle holds', () => {
  it('covers every table and every column of the database', async () => {
    const tables = (await ctx.app.database.db.introspection.getTables()).filter(
      (t) => !t.isView && !t.name.startsWith('kysely_') && !t.name.startsWith('contents_fts') && (!ctx.config.pgSchema || t.schema === ctx.config.pgSchema),
    );
    expect(tables.length).toBeGreaterThan(40);
    const bundled = new Map(BUNDLE_TABLES.map((s) => [s.table, s]));
    const unknown = tables.filter((t) => !bundled.has(t.name) && !NOT_BUNDLED[t.name]).map((t) => t.name);
    expect(unknown, 'tables neither bundled nor in NOT_BUNDLED').toEqual([]);
    const missing: string[] = [];
    for (const t of tables) {
      const spec = bundled.get(t.name);
      if (!spec) continue;
      for (const c of t.columns) {
        const carried =
          c.name === 'site_id' || (c.name === 'id' && (spec.id || spec.siteColumn === 'id')) || c.name in spec.columns || c.name in (spec.matchOnly ?? {});
        if (!carried && !NOT_CARRIED[t.name]?.[c.name]) missing.push(`${t.name}.${c.name}`);
      }
    }
    expect(missing, 'columns neither carried nor in NOT_CARRIED').toEqual([]);
    for (const name of Object.keys(NOT_BUNDLED))
      expect(
        tables.map((t) => t.name),
        `NOT_BUNDLED names ${name}`,
      ).toContain(name);
  });

  it.skipIf(TEST_DIALECT !== 'postgres')('declares JSON and boolean columns as the database has them (only PostgreSQL tells them apart)', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns where table_schema = current_schema()`.execute(ctx.app.database.db);
    const wrong: string[] = [];
    for (const spec of BUNDLE_TABLES) {
      for (const [column, kind] of Object.entries({ ...spec.columns, ...spec.matchOnly })) {
        const type = rows.find((r) => r.table_name === spec.table && r.column_name === column)?.data_type;
        const want = type === 'jsonb' ? 'json' : type === 'boolean' ? 'bool' : 'plain';
        if (type === undefined || want !== kind) wrong.push(`${spec.table}.${column}: ${type} declared ${kind}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
