import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/app.js';
import { useTestApp } from '../helpers/suite.js';

/** Revokes a token as another process would (the CLI, another instance): its own connection, plain SQL. */
async function revokeElsewhere(databaseUrl: string, schema: string | undefined, tokenId: string): Promise<void> {
  const at = new Date().toISOString();
  if (TEST_DIALECT === 'sqlite') {
    const other = new BetterSqlite3(databaseUrl);
    try {
      other.prepare('update api_tokens set revoked_at = ? where id = ?').run(at, tokenId);
    } finally {
      other.close();
    }
    return;
  }
  const other = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
  await other.connect();
  try {
    await other.query('update api_tokens set revoked_at = $1 where id = $2', [at, tokenId]);
  } finally {
    await other.end();
  }
}

describe.skipIf(TEST_DIALECT === 'sqlite' && process.env.TEST_SQLITE === 'memory')('a token revoked by another process (issue 16 item 12)', () => {
  const ctx = useTestApp();

  it('stops working here at once, not after the token cache expires', async () => {
    const api = await ctx.site();
    expect((await api.get('/v1/site/info')).status).toBe(200);
    const tokenId = (await ctx.app.database.db.selectFrom('api_tokens').select('id').where('site_id', '=', api.siteId).executeTakeFirstOrThrow()).id;
    await revokeElsewhere(ctx.config.databaseUrl, ctx.config.pgSchema, tokenId);
    const revokedAt = performance.now();
    let res = await api.get('/v1/site/info');
    while (res.status === 200 && performance.now() - revokedAt < 6000) {
      await new Promise((r) => setTimeout(r, 20));
      res = await api.get('/v1/site/info');
    }
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('TOKEN_REVOKED');
    expect(performance.now() - revokedAt).toBeLessThan(1000);
  });

  it('keeps other tokens working without a lookup storm (the cache is refreshed, not disabled)', async () => {
    const api = await ctx.site();
    for (let i = 0; i < 5; i++) expect((await api.get('/v1/site/info')).status).toBe(200);
  });
});
