import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../config.js';
import { now } from '../../db/json.js';
import type { Db } from '../../db/types.js';
import { scheduleJob } from '../../jobs/outbox.js';
import { AppError } from '../../shared/errors.js';
import type { FileStorage } from '../../shared/storage.js';
import { exportSite } from './bundles.export.js';
import * as repo from './bundles.repository.js';

/** An export's download stays valid this long after it is ready (decisions BN1). */
export const DOWNLOAD_VALID_MS = 60 * 60 * 1000;
export const EXPORT_JOB = 'site.export';

/** A running export writes its heartbeat this often (decisions BX13)... */
export const HEARTBEAT_MS = 10_000;
/** ...and one without a heartbeat for this long has lost its process. */
export const EXPORT_LEASE_MS = 60_000;
export const INTERRUPTED = 'The export stopped while it was being written: the process writing it ended (a crash or a restart). Start a new export.';

const exportKey = (siteId: string, id: string) => `private/exports/${siteId}/${id}`;

export interface ExportJobView {
  id: string;
  status: repo.SiteExportsTable['status'];
  withSubmissions: boolean;
  bytes: number | null;
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
  expiresAt: string | null;
  downloadUrl: string | null;
}

function toView(row: repo.SiteExportsTable, publicUrl: string, at = Date.now()): ExportJobView {
  const live = row.status === 'ready' && row.expires_at !== null && Date.parse(row.expires_at) > at;
  return {
    id: row.id,
    status: row.status,
    withSubmissions: Boolean(row.with_submissions),
    bytes: row.bytes === null ? null : Number(row.bytes),
    error: row.error,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    expiresAt: row.expires_at,
    downloadUrl: live ? `${publicUrl}/v1/site/export/${row.id}?download=true` : null,
  };
}

/** Queues an export of the site; the worker writes the bundle (runExportJob). */
export async function startExport(db: Db, siteId: string, withSubmissions: boolean): Promise<{ id: string; status: 'queued' }> {
  const id = randomUUID();
  await db.transaction().execute(async (tx) => {
    const at = now();
    await repo.insertExport(tx, {
      id,
      site_id: siteId,
      status: 'queued',
      with_submissions: withSubmissions,
      storage_key: null,
      bytes: null,
      error: null,
      created_at: at,
      finished_at: null,
      expires_at: null,
    });
    await scheduleJob(tx, { siteId, type: EXPORT_JOB, payload: { exportId: id }, runAt: at });
  });
  return { id, status: 'queued' };
}

export async function getExport(db: Db, siteId: string, id: string, publicUrl: string): Promise<ExportJobView> {
  const row = await repo.findExport(db, siteId, id);
  if (!row) throw new AppError('NOT_FOUND');
  return toView(row, publicUrl);
}

/** The bundle's bytes while its download is valid. */
export async function openExport(db: Db, storage: FileStorage, siteId: string, id: string) {
  const row = await repo.findExport(db, siteId, id);
  if (!row) throw new AppError('NOT_FOUND');
  if (row.status !== 'ready') throw new AppError('EXPORT_NOT_READY');
  if (!row.storage_key || !row.expires_at || Date.parse(row.expires_at) <= Date.now()) throw new AppError('EXPORT_EXPIRED');
  const file = await storage.read(row.storage_key);
  if (!file) throw new AppError('EXPORT_EXPIRED');
  return { ...file, filename: `site-${siteId}-${row.created_at.slice(0, 10)}.cairn.tar.gz` };
}

/**
 * The worker's side: writes the bundle to a temporary file, streams it into storage and marks
 * the export ready for an hour. A failure is recorded on the export (not retried: the operator
 * starts another).
 */
export async function runExportJob(
  deps: { db: Db; storage: FileStorage; config: Pick<Config, 'mediaPublicUrl'> },
  siteId: string,
  exportId: string,
): Promise<void> {
  const row = await repo.findExport(deps.db, siteId, exportId);
  if (!row || row.status === 'ready' || row.status === 'failed') return;
  if (row.status === 'running') {
    // The job ran before (the jobs module runs it again once its lock ran out): its process died
    // when the heartbeat stopped; while the heartbeat goes on, another process is still writing it.
    await repo.failStaleExports(deps.db, new Date(Date.now() - EXPORT_LEASE_MS).toISOString(), INTERRUPTED, now(), exportId);
    return;
  }
  await repo.updateExport(deps.db, siteId, exportId, { status: 'running', heartbeat_at: now() });
  const heartbeat = setInterval(() => {
    repo.updateExport(deps.db, siteId, exportId, { heartbeat_at: now() }).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-export-'));
  try {
    const file = path.join(dir, 'bundle.tar.gz');
    const summary = await exportSite({ db: deps.db, storage: deps.storage, mediaPublicUrl: deps.config.mediaPublicUrl }, siteId, file, {
      withSubmissions: Boolean(row.with_submissions),
    });
    const { tempKey } = await deps.storage.upload(createReadStream(file));
    await deps.storage.promote(tempKey, exportKey(siteId, exportId));
    const at = new Date();
    await repo.updateExport(deps.db, siteId, exportId, {
      status: 'ready',
      storage_key: exportKey(siteId, exportId),
      bytes: summary.bytes,
      finished_at: at.toISOString(),
      expires_at: new Date(at.getTime() + DOWNLOAD_VALID_MS).toISOString(),
    });
  } catch (err) {
    await repo.updateExport(deps.db, siteId, exportId, { status: 'failed', error: (err as Error).message.slice(0, 500), finished_at: now() });
  } finally {
    clearInterval(heartbeat);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Running exports whose heartbeat stopped a lease ago end `failed` with a clear message (their
 * process died); the worker runs this at its start and then every few minutes. Answers how many.
 */
export async function failInterruptedExports(db: Db, at = new Date()): Promise<number> {
  return repo.failStaleExports(db, new Date(at.getTime() - EXPORT_LEASE_MS).toISOString(), INTERRUPTED, at.toISOString());
}

/** Deletes the files of exports whose hour is over (the job row stays: its download answers 410); how many. */
export async function purgeExpiredExports(db: Db, storage: FileStorage, at = new Date()): Promise<number> {
  const rows = await repo.expiredExports(db, at.toISOString(), 50);
  for (const row of rows) {
    await storage.delete(row.storage_key!);
    await repo.updateExport(db, row.site_id, row.id, { storage_key: null });
  }
  return rows.length;
}
