import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/app.js';
import { useTestApp } from '../helpers/suite.js';

/**
 * WAL checkpoints run on a thread of their own (src/db/sqlite-checkpoint.ts): a large commit does
 * not copy the WAL into the database file on the event loop, the thread does it within its
 * interval, and the WAL stays bounded (reused from its start) instead of growing with every write.
 */
const onFile = TEST_DIALECT === 'sqlite' && process.env.TEST_SQLITE !== 'memory';
const base = { connectTimeoutMs: 30_000, busyTimeoutMs: 5_000, optimizeIntervalMs: 60_000 };
// About 900 KB of text, stored as the document, HTML, text and a revision: two such commits take
// the WAL past the 1,000 pages (4 MB) at which SQLite's own checkpoint would run inside a commit.
const body = (n: number) => `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(16_000)} ${n}`;
const sizes = (file: string) => ({ db: fs.statSync(file).size, wal: fs.statSync(`${file}-wal`).size });

describe.skipIf(!onFile)('SQLite checkpoints off the event loop', () => {
  describe('with a checkpoint thread that waits a minute', () => {
    const ctx = useTestApp({ database: { ...base, checkpointIntervalMs: 60_000 } });
    it('leaves a large commit in the WAL: the commit itself copied nothing into the database file', async () => {
      const api = await ctx.site();
      // A first large commit fills the WAL part-way. (The migrations once did: since they run as one
      // transaction (decisions MG1) they leave the WAL too small for one commit to pass 1,000 pages.)
      expect((await api.post('/v1/contents', { type: 'post', title: 'Large', bodyMarkdown: body(0) })).status).toBe(201);
      const before = sizes(ctx.config.databaseUrl);
      expect((await api.post('/v1/contents', { type: 'post', title: 'Large', bodyMarkdown: body(1) })).status).toBe(201);
      const after = sizes(ctx.config.databaseUrl);
      // The WAL holds more than 1,000 pages: SQLite's own checkpoint would have run in this commit.
      expect(after.wal).toBeGreaterThan(4 * 1024 * 1024 + 1000 * 32);
      expect(after.wal).toBeGreaterThan(before.wal + 2 * 1024 * 1024);
      expect(after.db).toBe(before.db);
    });
  });

  describe('with a checkpoint thread every 200 ms', () => {
    const ctx = useTestApp({ database: { ...base, checkpointIntervalMs: 200 } });
    it('copies the WAL into the database file soon after, and reuses the WAL instead of growing it', async () => {
      const api = await ctx.site();
      const settle = () => new Promise((r) => setTimeout(r, 700));
      await settle();
      const before = sizes(ctx.config.databaseUrl);
      expect((await api.post('/v1/contents', { type: 'post', title: 'Large 1', bodyMarkdown: body(1) })).status).toBe(201);
      await settle();
      const once = sizes(ctx.config.databaseUrl);
      expect(once.db).toBeGreaterThan(before.db + 2 * 1024 * 1024);
      for (let i = 2; i < 6; i++) {
        expect((await api.post('/v1/contents', { type: 'post', title: `Large ${i}`, bodyMarkdown: body(i) })).status).toBe(201);
        await settle();
      }
      // Five large writes: the database file holds them all, the WAL no more than about two.
      const last = sizes(ctx.config.databaseUrl);
      expect(last.db).toBeGreaterThan(before.db + 10 * 1024 * 1024);
      expect(last.wal).toBeLessThan(once.wal * 2);
    }, 60_000);
  });
});
