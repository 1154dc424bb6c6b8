import { now } from '../../db/json.js';
import type { Db, Executor } from '../../db/types.js';
import { invalid, notFound } from '../../shared/errors.js';
import { emitEvent } from '../../jobs/outbox.js';
import { type FileStorage, mediaPrefix } from '../../shared/storage.js';
import * as repo from './media-folders.repository.js';
import type { FolderRow } from './media-folders.repository.js';

/** Folders nest at most this deep: a root folder is level 1 (spec "Media folders", decisions M6). */
export const MAX_DEPTH = 3;

export const nameKey = (name: string) => name.toLocaleLowerCase('en');

/** A site's folders as a tree in memory, for depth, cycles and the shapes the API answers. */
class Folders {
  readonly byId: Map<string, FolderRow>;
  readonly children = new Map<string | null, FolderRow[]>();

  constructor(
    rows: FolderRow[],
    readonly counts: Map<string, number>,
  ) {
    this.byId = new Map(rows.map((r) => [r.id, r]));
    for (const r of rows) (this.children.get(r.parent_id) ?? this.children.set(r.parent_id, []).get(r.parent_id)!).push(r);
  }

  /** 1 for a root folder, 2 for its children, ... */
  depth(id: string | null): number {
    let d = 0;
    for (let at = id; at && d <= MAX_DEPTH + 1; at = this.byId.get(at)?.parent_id ?? null) d++;
    return d;
  }

  /** Levels in the subtree of `id`, itself included (1 for a folder without subfolders). */
  height(id: string): number {
    const kids = this.children.get(id) ?? [];
    return 1 + Math.max(0, ...kids.map((k) => this.height(k.id)));
  }

  /** `id` and every folder under it. */
  subtree(id: string): string[] {
    return [id, ...(this.children.get(id) ?? []).flatMap((k) => this.subtree(k.id))];
  }

  flat(r: FolderRow) {
    return { id: r.id, name: r.name, parentId: r.parent_id, mediaCount: this.counts.get(r.id) ?? 0, createdAt: r.created_at, updatedAt: r.updated_at };
  }

  tree(parentId: string | null = null): TreeNode[] {
    return (this.children.get(parentId) ?? []).map((r) => ({ id: r.id, name: r.name, mediaCount: this.counts.get(r.id) ?? 0, children: this.tree(r.id) }));
  }
}

export interface TreeNode {
  id: string;
  name: string;
  mediaCount: number;
  children: TreeNode[];
}

export async function load(db: Executor, siteId: string): Promise<Folders> {
  const [rows, counts] = await Promise.all([repo.allFolders(db, siteId), repo.mediaCounts(db, siteId)]);
  return new Folders(rows, counts);
}

function existing(folders: Folders, id: string): FolderRow {
  const row = folders.byId.get(id);
  if (!row) throw notFound('folder');
  return row;
}

/** A parent a folder may go under: a folder of this site, not the folder itself or below it, within the depth. */
export function checkParent(folders: Folders, parentId: string | null, moving?: string): void {
  if (parentId === null) return;
  if (!folders.byId.has(parentId)) throw invalid('FOLDER_NOT_FOUND', 'parentId');
  if (moving && folders.subtree(moving).includes(parentId))
    throw invalid('PARENT_INVALID', 'parentId', 'A folder cannot go under itself or one of its subfolders.');
  const levels = moving ? folders.height(moving) : 1;
  if (folders.depth(parentId) + levels > MAX_DEPTH) {
    throw invalid(
      'FOLDER_DEPTH_EXCEEDED',
      'parentId',
      `Folders nest at most ${MAX_DEPTH} levels deep${moving ? " (counting the folder's own subfolders)" : ''}.`,
    );
  }
}

export async function assertNameFree(db: Executor, siteId: string, parentId: string | null, name: string, exceptId?: string) {
  if (await repo.nameTaken(db, siteId, parentId, nameKey(name), exceptId)) throw invalid('NAME_TAKEN', 'name', `A folder named "${name}" already exists here.`);
}

export const trimmed = (name: string) => {
  const out = name.trim();
  if (!out) throw invalid('VALIDATION_FAILED', 'name', 'must not be empty');
  return out;
};

// ------------------------------------------------------------------------------------------------

/** Every folder, flat (optionally the children of one parent, `root` for the top level), filtered by name. */
export async function listFolders(db: Executor, siteId: string, query: { parentId?: string; search?: string }) {
  const folders = await load(db, siteId);
  let rows = [...folders.byId.values()];
  if (query.parentId !== undefined) rows = rows.filter((r) => r.parent_id === (query.parentId === 'root' ? null : query.parentId));
  if (query.search) rows = rows.filter((r) => r.name_key.includes(nameKey(query.search!)));
  return rows.map((r) => folders.flat(r));
}

export async function folderTree(db: Executor, siteId: string) {
  return (await load(db, siteId)).tree();
}

/** A folder with its children, as get, create and update answer it. */
export async function folderDetail(db: Executor, siteId: string, row: FolderRow) {
  const folders = await load(db, siteId);
  return {
    ...folders.flat(row),
    children: (folders.children.get(row.id) ?? []).map((c) => ({ id: c.id, name: c.name, mediaCount: folders.counts.get(c.id) ?? 0 })),
  };
}

/** Files into a folder (null: outside any); only this site's files are moved and counted. */
export async function moveMedia(db: Db, siteId: string, mediaIds: string[], folderId: string | null) {
  return db.transaction().execute(async (tx) => {
    if (folderId !== null && !(await repo.findFolder(tx, siteId, folderId))) throw invalid('FOLDER_NOT_FOUND', 'folderId');
    return { moved: await repo.moveFiles(tx, siteId, [...new Set(mediaIds)], folderId, now()) };
  });
}

/**
 * `move` (default): the folder's files and subfolders go to its parent (a subfolder whose name
 * the parent already has is a 422, and nothing changes). `delete`: the folder, its subfolders and
 * all their files are removed for good, the stored files after the commit.
 */
export async function deleteFolder(db: Db, storage: FileStorage, siteId: string, id: string, action: 'move' | 'delete') {
  const removedFiles = await db.transaction().execute(async (tx) => {
    const folders = await load(tx, siteId);
    const row = existing(folders, id);
    const at = now();
    if (action === 'delete') {
      const ids = folders.subtree(id);
      const files = await repo.deleteFilesOf(tx, siteId, ids);
      await repo.deleteFolders(tx, siteId, ids);
      for (const f of files) await emitEvent(tx, siteId, 'media.deleted', f, at);
      return files.map((f) => f.id);
    }
    for (const child of folders.children.get(id) ?? []) {
      await assertNameFree(tx, siteId, row.parent_id, child.name, child.id);
      await repo.updateFolder(tx, siteId, child.id, { parent_id: row.parent_id, parent_key: row.parent_id ?? '', updated_at: at });
    }
    await repo.moveFilesOf(tx, siteId, [id], row.parent_id, at);
    await repo.deleteFolders(tx, siteId, [id]);
    return [] as string[];
  });
  for (const fileId of removedFiles) await storage.deletePrefix(mediaPrefix(siteId, fileId));
}
