import { describe, expect, it } from 'vitest';
import { createSiteWithToken } from '../helpers/app.js';
import { Worker, type Job } from '../../src/jobs/worker.js';
import { cancelJob, emitEvent, scheduleJob } from '../../src/jobs/outbox.js';
import { useTestApp } from '../helpers/suite.js';

const ctx = useTestApp();

function worker(): Worker {
  return new Worker({ db: ctx.app.database.db, log: ctx.app.log }, { pollMs: 50, lockMs: 60_000 });
}

const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('the jobs table and worker', () => {
  it('runs a job once it is due, then removes it', async () => {
    const { siteId } = await createSiteWithToken(ctx.app);
    const seen: Job[] = [];
    const w = worker().handle('test.record', async (_c, job) => {
      seen.push(job);
    });
    await scheduleJob(ctx.app.database.db, { siteId, type: 'test.record', payload: { n: 1 }, runAt: soon(60_000) });
    expect(await w.runDueJobs()).toBe(0);
    expect(await w.runDueJobs(new Date(Date.now() + 61_000))).toBe(1);
    expect(seen.map((j) => j.payload)).toEqual([{ n: 1 }]);
    expect(await w.runDueJobs(new Date(Date.now() + 61_000))).toBe(0);
  });

  it('replaces a pending job with the same key, and cancels by key', async () => {
    const { siteId } = await createSiteWithToken(ctx.app);
    const seen: unknown[] = [];
    const w = worker().handle('test.keyed', async (_c, job) => {
      seen.push(job.payload);
    });
    const db = ctx.app.database.db;
    await scheduleJob(db, { siteId, type: 'test.keyed', key: 'k:1', payload: { v: 'old' }, runAt: soon(-1000) });
    await scheduleJob(db, { siteId, type: 'test.keyed', key: 'k:1', payload: { v: 'new' }, runAt: soon(-1000) });
    await scheduleJob(db, { siteId, type: 'test.keyed', key: 'k:2', payload: { v: 'cancelled' }, runAt: soon(-1000) });
    await cancelJob(db, siteId, 'k:2');
    await w.runDueJobs();
    expect(seen).toEqual([{ v: 'new' }]);
  });

  it('retries a failing job with backoff and records the error, then marks it failed', async () => {
    const { siteId } = await createSiteWithToken(ctx.app);
    let calls = 0;
    const w = new Worker({ db: ctx.app.database.db, log: ctx.app.log }, { pollMs: 50, maxAttempts: 2 }).handle('test.flaky', async () => {
      calls++;
      throw new Error('receiver down');
    });
    await scheduleJob(ctx.app.database.db, { siteId, type: 'test.flaky', key: 'flaky', payload: {}, runAt: soon(-1000) });
    expect(await w.runDueJobs()).toBe(1);
    const row = await ctx.app.database.db.selectFrom('jobs').selectAll().where('site_id', '=', siteId).executeTakeFirstOrThrow();
    expect(row.last_error).toBe('receiver down');
    expect(Date.parse(row.run_at)).toBeGreaterThan(Date.now());
    expect(await w.runDueJobs()).toBe(0);
    expect(await w.runDueJobs(new Date(Date.now() + 10_000))).toBe(1);
    const failed = await ctx.app.database.db.selectFrom('jobs').selectAll().where('site_id', '=', siteId).executeTakeFirstOrThrow();
    expect(failed.failed_at).not.toBeNull();
    expect(calls).toBe(2);
    expect(await w.runDueJobs(new Date(Date.now() + 3_600_000))).toBe(0);
  });

  it('never lets two workers claim the same job', async () => {
    const { siteId } = await createSiteWithToken(ctx.app);
    const ran: number[] = [];
    const handler = async (_c: unknown, job: Job) => {
      ran.push(job.payload.n as number);
      await new Promise((r) => setTimeout(r, 5));
    };
    const a = worker().handle('test.race', handler);
    const b = worker().handle('test.race', handler);
    for (let n = 0; n < 30; n++) await scheduleJob(ctx.app.database.db, { siteId, type: 'test.race', payload: { n }, runAt: soon(-1000) });
    await Promise.all([a.runDueJobs(), b.runDueJobs(), a.runDueJobs(), b.runDueJobs()]);
    await Promise.all([a.runDueJobs(), b.runDueJobs()]);
    expect(ran.sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('writes events to the outbox only when the transaction commits', async () => {
    const { siteId } = await createSiteWithToken(ctx.app);
    const db = ctx.app.database.db;
    await expect(
      db.transaction().execute(async (tx) => {
        await emitEvent(tx, siteId, 'content.published', { id: 1 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await db.transaction().execute(async (tx) => emitEvent(tx, siteId, 'content.archived', { id: 2 }));
    const rows = await db.selectFrom('outbox_events').select(['type', 'payload']).where('site_id', '=', siteId).execute();
    expect(rows.map((r) => r.type)).toEqual(['content.archived']);
  });

  it('starts and stops its polling loop', async () => {
    const { siteId } = await createSiteWithToken(ctx.app);
    let done = false;
    const w = worker().handle('test.loop', async () => {
      done = true;
    });
    await scheduleJob(ctx.app.database.db, { siteId, type: 'test.loop', payload: {}, runAt: soon(-10) });
    w.start();
    for (let i = 0; i < 50 && !done; i++) await new Promise((r) => setTimeout(r, 20));
    await w.stop();
    expect(done).toBe(true);
  });
});
