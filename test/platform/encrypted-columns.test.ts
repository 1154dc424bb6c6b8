import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { FakeGoogle } from '../fakes/google-search.js';
import { useTestApp } from '../helpers/suite.js';
import { ENCRYPTED_COLUMNS } from '../../src/shared/encrypted-columns.js';
import { TEST_DIALECT } from '../helpers/app.js';

const fake = await new FakeGoogle().start();
afterAll(() => fake.close());
const ctx = useTestApp({
  searchConsole: { ...fake.endpoints, syncIntervalMs: 3_600_000, requestsPerSecond: 1000, maxRowsPerDay: 1000, indexingDailyQuota: 0, indexingIntervalMs: 0 },
});

/** Every text column of every table, as (table, column). */
async function textColumns(): Promise<Array<{ table: string; column: string }>> {
  const db = ctx.app.database.db;
  if (TEST_DIALECT === 'postgres') {
    const { rows } = await sql<{ table: string; column: string }>`
      select table_name as "table", column_name as "column" from information_schema.columns
      where table_schema = current_schema() and data_type = 'text'`.execute(db);
    return rows;
  }
  const { rows: tables } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  const out: Array<{ table: string; column: string }> = [];
  for (const { name } of tables) {
    const { rows } = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${name})`.execute(db);
    for (const c of rows) if (c.type.toLowerCase() === 'text') out.push({ table: name, column: c.name });
  }
  return out;
}

describe('the registry of encrypted columns (decisions GS8)', () => {
  it('names every column that holds an encrypted value, so `cairn secrets rotate` cannot forget one', async () => {
    const api = await ctx.site();
    // One secret of each kind the API stores.
    expect((await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['content.published'] })).status).toBe(201);
    expect((await api.put('/v1/spam/settings', { captchaProvider: 'turnstile', captchaSiteKey: 'k', captchaSecret: 's' })).status).toBe(200);
    fake.properties.set('sc-domain:registry.test', 'siteOwner');
    expect((await api.put('/v1/integrations/search/connection', { propertyUrl: 'sc-domain:registry.test', credentials: fake.refreshToken() })).status).toBe(
      200,
    );
    const holding: string[] = [];
    for (const { table, column } of await textColumns()) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} like 'enc:v1:%'`.execute(
        ctx.app.database.db,
      );
      if (Number(rows[0]!.n) > 0) holding.push(`${table}.${column}`);
    }
    const registered = ENCRYPTED_COLUMNS.flatMap((spec) => spec.columns.map((c) => `${spec.table}.${c}`));
    expect(holding.length).toBeGreaterThanOrEqual(3);
    expect(holding.filter((c) => !registered.includes(c))).toEqual([]);
  });
});
