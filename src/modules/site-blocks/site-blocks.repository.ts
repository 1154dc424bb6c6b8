import type { Selectable } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { AutoId, Bool, Executor, Json, Timestamp } from '../../db/types.js';
import { tableRepository } from '../../kit/repository.js';
import { revisionStore } from '../../kit/revisions.js';

export interface SiteBlocksTable {
  id: AutoId;
  site_id: string;
  name: string;
  slug: string;
  type: 'global' | 'page';
  status: 'draft' | 'published';
  path: string | null;
  locale: string;
  translation_group: string;
  schema: Json<unknown[]>;
  data: Json<Record<string, unknown>>;
  published_snapshot: Json<{ schema: unknown[]; data: Record<string, unknown> }> | null;
  has_unpublished_changes: Bool;
  published_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SiteBlockRevisionsTable {
  id: AutoId;
  site_id: string;
  site_block_id: number;
  author_id: string | null;
  action: string;
  changes: Json<unknown[]>;
  snapshot: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface SiteBlockSettingsTable {
  site_id: string;
  staged_publishing: Bool;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    site_blocks: SiteBlocksTable;
    site_block_revisions: SiteBlockRevisionsTable;
    site_block_settings: SiteBlockSettingsTable;
  }
}

export type SiteBlockRow = Selectable<SiteBlocksTable>;

export const siteBlocksTable = tableRepository('site_blocks');

/** Site-block revisions: the shared engine; `changes` are `{ field, from, to }`, the snapshot `{ data }`. */
export const revisions = revisionStore('site_block_revisions', 'site_block_id');

/** A block by slug; `forUpdate` inside a write transaction locks the row (see lockForUpdate), so concurrent edits queue. */
export function findBySlug(db: Executor, siteId: string, locale: string, slug: string, forUpdate = false): Promise<SiteBlockRow | undefined> {
  const q = db.selectFrom('site_blocks').selectAll().where('site_id', '=', siteId).where('locale', '=', locale).where('slug', '=', slug);
  return (forUpdate ? q.modifyEnd(dialectOf(db).lockForUpdate()) : q).executeTakeFirst();
}

export function findByPath(db: Executor, siteId: string, locale: string, path: string): Promise<SiteBlockRow | undefined> {
  return db.selectFrom('site_blocks').selectAll().where('site_id', '=', siteId).where('locale', '=', locale).where('path', '=', path).executeTakeFirst();
}

/** The id of the block of the locale using this path, other than `exceptId`. */
export async function pathHolder(db: Executor, siteId: string, locale: string, path: string, exceptId?: number): Promise<number | undefined> {
  let q = db.selectFrom('site_blocks').select('id').where('site_id', '=', siteId).where('locale', '=', locale).where('path', '=', path);
  if (exceptId) q = q.where('id', '!=', exceptId);
  const row = await q.executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

export async function stagedPublishing(db: Executor, siteId: string): Promise<boolean> {
  const row = await db.selectFrom('site_block_settings').select('staged_publishing').where('site_id', '=', siteId).executeTakeFirst();
  return Boolean(row?.staged_publishing);
}

export async function saveSettings(db: Executor, siteId: string, staged: boolean, at: string): Promise<void> {
  await db
    .insertInto('site_block_settings')
    .values({ site_id: siteId, staged_publishing: staged, updated_at: at })
    .onConflict((oc) => oc.column('site_id').doUpdateSet({ staged_publishing: staged, updated_at: at }))
    .execute();
}

/** Turning staged publishing off makes every block's working data live: snapshots are dropped. */
export async function dropSnapshots(db: Executor, siteId: string, at: string): Promise<void> {
  await db
    .updateTable('site_blocks')
    .set({ published_snapshot: null, has_unpublished_changes: false, updated_at: at })
    .where('site_id', '=', siteId)
    .where('published_snapshot', 'is not', null)
    .execute();
}

/** What the SEO outputs read of a published page: its address, names and what readers see. */
