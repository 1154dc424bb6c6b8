import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Json, Timestamp } from '../../db/types.js';
import { tableRepository } from '../../kit/repository.js';
import { prepared } from '../../db/prepared.js';

export interface MediaFilesTable {
  id: string;
  site_id: string;
  folder_id: string | null;
  filename: string;
  original_name: string;
  mime_type: string;
  size: number;
  width: number | null;
  height: number | null;
  alt: string | null;
  title: string | null;
  description: string | null;
  storage_key: string;
  etag: string;
  variant_widths: Json<number[]>;
  focal_x: number | null;
  focal_y: number | null;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    media_files: MediaFilesTable;
  }
}

export type MediaRow = Selectable<MediaFilesTable>;

export const mediaTable = tableRepository('media_files');

export function insertMedia(db: Executor, row: Insertable<MediaFilesTable>) {
  return db.insertInto('media_files').values(row).execute();
}

// Read on every file delivery: prepared (P16).
const mediaById = prepared((db, p: { siteId: string; id: string }) =>
  db.selectFrom('media_files').selectAll().where('site_id', '=', p.siteId).where('id', '=', p.id),
);

export function findMedia(db: Executor, siteId: string, id: string): Promise<MediaRow | undefined> {
  return mediaById.executeTakeFirst(db, { siteId, id }) as Promise<MediaRow | undefined>;
}

/**
 * Points a file's row at new objects (a replace), only if it still names `fromKey`: false when
 * another replace committed first (the caller reads the row again).
 */
export async function replaceObjects(db: Executor, siteId: string, id: string, fromKey: string, patch: Updateable<MediaFilesTable>): Promise<boolean> {
  const res = await db
    .updateTable('media_files')
    .set(patch)
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .where('storage_key', '=', fromKey)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export function folderName(db: Executor, siteId: string, folderId: string) {
  return db.selectFrom('media_folders').select(['id', 'name']).where('site_id', '=', siteId).where('id', '=', folderId).executeTakeFirst();
}

export type DeletedMedia = Pick<MediaRow, 'id' | 'site_id' | 'filename' | 'mime_type' | 'size'>;

/** What a media.deleted event tells of a file. */
export const deletedEvent = (r: DeletedMedia) => ({ id: r.id, filename: r.filename, mimeType: r.mime_type, size: Number(r.size) });

/** Up to 1,000 trashed files (of a site, or every site; trashed before `before`): read, then deleted. */
export async function deleteTrashed(db: Executor, siteId: string | null, before?: string): Promise<DeletedMedia[]> {
  let q = db.selectFrom('media_files').select(['id', 'site_id', 'filename', 'mime_type', 'size']).where('deleted_at', 'is not', null);
  if (siteId) q = q.where('site_id', '=', siteId);
  if (before) q = q.where('deleted_at', '<', before);
  const rows = await q.limit(1000).execute();
  if (rows.length)
    await db
      .deleteFrom('media_files')
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
  return rows;
}
