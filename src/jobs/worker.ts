import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/types.js';
import { parseJson } from '../db/json.js';
import * as repo from './jobs.repository.js';

export interface JobContext {
  db: Db;
  log: FastifyBaseLogger;
}

export interface Job {
  id: number;
  siteId: string;
  type: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** Thrown by a handler whose dependency asked to be called again later (429 with Retry-After): retried then, not on the usual backoff. */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number | null,
  ) {
    super(message);
  }
}

export type JobHandler = (ctx: JobContext, job: Job) => Promise<void>;
/** A periodic task (e.g. webhook delivery): returns how much work it did, so the loop knows to go on. */
export type WorkerTask = (ctx: JobContext) => Promise<number>;

export interface WorkerOptions {
  pollMs: number;
  /** How long a claimed job stays locked before another worker may take it again. */
  lockMs?: number;
  maxAttempts?: number;
  batchSize?: number;
  /** Called after each job ran (or failed): what it changed of its site is no longer cached. */
  onJobDone?: (siteId: string) => void;
}

/**
 * The in-process worker (architecture "Events and background work"): claims due jobs from the
 * jobs table and runs their handlers, then runs the registered periodic tasks. Several instances
 * on PostgreSQL share the table safely (jobs are claimed with FOR UPDATE SKIP LOCKED). A job that
 * throws is retried with exponential backoff, then marked failed.
 */
export class Worker {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly tasks: Array<{ name: string; run: WorkerTask }> = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    private readonly ctx: JobContext,
    private readonly options: WorkerOptions,
  ) {}

  handle(type: string, handler: JobHandler): this {
    this.handlers.set(type, handler);
    return this;
  }

  task(name: string, run: WorkerTask): this {
    this.tasks.push({ name, run });
    return this;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err) => this.ctx.log.error({ err }, 'worker tick failed'))
        .then((busy) => this.schedule(busy ? 0 : this.options.pollMs));
    }, delay);
    this.timer.unref();
  }

  /** One pass: due jobs, then tasks. Returns whether there may be more work right away. */
  async tick(): Promise<boolean> {
    const jobs = await this.runDueJobs();
    let taskWork = 0;
    for (const task of this.tasks) {
      try {
        taskWork += await task.run(this.ctx);
      } catch (err) {
        this.ctx.log.error({ err, task: task.name }, 'worker task failed');
      }
    }
    return jobs >= (this.options.batchSize ?? 20) || taskWork > 0;
  }

  /** Claims and runs the jobs that are due now; returns how many ran. */
  async runDueJobs(now = new Date()): Promise<number> {
    const batch = this.options.batchSize ?? 20;
    const claimed = await repo.claimDueJobs(this.ctx.db, now.toISOString(), this.options.lockMs ?? 60_000, batch);
    for (const row of claimed) {
      const job: Job = { id: Number(row.id), siteId: row.site_id, type: row.type, payload: parseJson(row.payload, {}), attempts: Number(row.attempts) };
      const handler = this.handlers.get(job.type);
      try {
        if (!handler) throw new Error(`no handler for job type ${job.type}`);
        await handler(this.ctx, job);
        await repo.completeJob(this.ctx.db, job.id);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.ctx.log.warn({ jobId: job.id, type: job.type, attempts: job.attempts, error: message }, 'job failed');
        if (job.attempts >= (this.options.maxAttempts ?? 10)) await repo.failJob(this.ctx.db, job.id, new Date().toISOString(), message);
        else {
          const backoff = Math.min(3_600_000, 1000 * 2 ** job.attempts);
          const delay = err instanceof RetryLater && err.delayMs !== null ? Math.max(err.delayMs, 1000) : backoff;
          await repo.retryJob(this.ctx.db, job.id, new Date(Date.now() + delay).toISOString(), message);
        }
      } finally {
        this.options.onJobDone?.(job.siteId);
      }
    }
    return claimed.length;
  }
}
