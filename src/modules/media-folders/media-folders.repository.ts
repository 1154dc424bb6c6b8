import { type Selectable, sql } from 'kysely';
import type { Executor, Timestamp } from '../../db/types.js';

export interface MediaFoldersTable {
  id: string;
  site_id: string;
  name: string;
  name_key: string;
  parent_id: string | null;
  parent_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    media_folders: MediaFoldersTable;
  }
}

export type FolderRow = Selectable<MediaFoldersTable>;

/** Every folder of a site (a site has few: the tree, depth and cycle checks work on this list). */
export function allFolders(db: Executor, siteId: string): Promise<FolderRow[]> {
  return db.selectFrom('media_folders').selectAll().where('site_id', '=', siteId).orderBy('name_key').orderBy('id').execute();
}

export function findFolder(db: Executor, siteId: string, id: string): Promise<FolderRow | undefined> {
  return db.selectFrom('media_folders').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

/** Active files per folder of the site (one grouped count). */
export async function mediaCounts(db: Executor, siteId: string): Promise<Map<string, number>> {
  const rows = await sql<{ folder_id: string; n: number }>`
    select folder_id, count(*) as n from media_files
    where site_id = ${siteId} and folder_id is not null and deleted_at is null group by folder_id`.execute(db);
  return new Map(rows.rows.map((r) => [r.folder_id, Number(r.n)]));
}

/** A sibling with this name (any case) under the parent, other than `exceptId`. */
export async function nameTaken(db: Executor, siteId: string, parentId: string | null, nameKey: string, exceptId?: string): Promise<boolean> {
  let q = db
    .selectFrom('media_folders')
    .select('id')
    .where('site_id', '=', siteId)
    .where('parent_key', '=', parentId ?? '')
    .where('name_key', '=', nameKey);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export function insertFolder(db: Executor, row: FolderRow) {
  return db.insertInto('media_folders').values(row).execute();
}

export function updateFolder(db: Executor, siteId: string, id: string, patch: Partial<FolderRow>) {
  return db.updateTable('media_folders').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

/** Moves the files of these folders (all of them, trashed too) into `folderId`. */
export function moveFilesOf(db: Executor, siteId: string, fromIds: string[], folderId: string | null, at: string) {
  if (!fromIds.length) return Promise.resolve();
  return sql`update media_files set folder_id = ${folderId}, updated_at = ${at} where site_id = ${siteId} and folder_id in (${sql.join(fromIds)})`.execute(db);
}

/** Moves these files (of this site) into `folderId`; returns how many there were. */
export async function moveFiles(db: Executor, siteId: string, ids: string[], folderId: string | null, at: string): Promise<number> {
  const res = await sql`update media_files set folder_id = ${folderId}, updated_at = ${at} where site_id = ${siteId} and id in (${sql.join(ids)})`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** Deletes the files in these folders; returns what a media.deleted event tells of each (their stored objects go after the commit). */
export async function deleteFilesOf(db: Executor, siteId: string, folderIds: string[]) {
  if (!folderIds.length) return [];
  const { rows } = await sql<{ id: string; filename: string; mime_type: string; size: number }>`
    select id, filename, mime_type, size from media_files where site_id = ${siteId} and folder_id in (${sql.join(folderIds)})`.execute(db);
  await sql`delete from media_files where site_id = ${siteId} and folder_id in (${sql.join(folderIds)})`.execute(db);
  return rows.map((r) => ({ id: r.id, filename: r.filename, mimeType: r.mime_type, size: Number(r.size) }));
}

export function deleteFolders(db: Executor, siteId: string, ids: string[]) {
  return db.deleteFrom('media_folders').where('site_id', '=', siteId).where('id', 'in', ids).execute();
}
