import { Type } from 'typebox';
import { fieldMap } from '../../kit/fields.js';
import { resource } from '../../kit/resource.js';
import { named, Nullable, ref, Timestamp, Uuid } from '../../shared/schemas.js';
import { assertNameFree, checkParent, folderDetail, load, nameKey, trimmed } from './media-folders.service.js';

const FolderName = Type.String({ minLength: 1, maxLength: 255, description: 'Unique within its parent, whatever the case' });
export const ParentId = Nullable({ ...Uuid, description: 'The parent folder; null for the top level' });
const MediaCount = Type.Integer({ description: "The folder's own files, trashed ones left out" });

/** Spec "Media folders" (decisions M6): the folder shape and its bodies. */
export const folderFields = fieldMap({
  id: { column: 'id', schema: Type.String({ format: 'uuid' }) },
  name: { column: 'name', schema: Type.String(), input: FolderName, create: 'required' },
  parentId: { column: 'parent_id', schema: Nullable(Type.String({ format: 'uuid' })), input: ParentId },
  mediaCount: { schema: MediaCount },
  createdAt: { column: 'created_at', schema: Timestamp },
  updatedAt: { column: 'updated_at', schema: Timestamp },
});

const FolderSummary = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), mediaCount: MediaCount });
export const FolderDetail = named('MediaFolderDetail', Type.Object({ ...folderFields.response().properties, children: Type.Array(FolderSummary) }));

/**
 * Media folders on the resource kit: uuid ids, created under media.update, at most 3 levels,
 * names unique within a parent whatever the case; get, create and update answer the folder with
 * its children. The list, the tree, moving and deleting (with its files) are the module's own.
 */
export const mediaFolders = resource({
  table: 'media_folders',
  noun: 'folder',
  name: 'MediaFolder',
  plural: 'MediaFolders',
  tag: 'Media folders',
  path: '/media-folders',
  scope: 'media',
  scopes: { create: 'media.update' },
  id: 'uuid',
  fields: folderFields,
  list: { sort: [], search: [], common: [] },
  detail: { schema: ref(FolderDetail), load: folderDetail },
  rules: {
    prepare(_db, { input }) {
      input.name = trimmed(input.name);
    },
    async create(tx, { siteId, row }) {
      checkParent(await load(tx, siteId), row.parent_id);
      await assertNameFree(tx, siteId, row.parent_id, row.name);
      Object.assign(row, { name_key: nameKey(row.name), parent_key: row.parent_id ?? '' });
    },
    /** Rename and/or move (parentId given: null is the top level). */
    async update(tx, { siteId, current, input, patch }) {
      const folders = await load(tx, siteId);
      const name = input.name === undefined ? current.name : trimmed(input.name);
      const parentId = input.parentId === undefined ? current.parent_id : input.parentId;
      if (parentId !== current.parent_id) checkParent(folders, parentId, current.id);
      await assertNameFree(tx, siteId, parentId, name, current.id);
      Object.assign(patch, { name, name_key: nameKey(name), parent_id: parentId, parent_key: parentId ?? '' });
    },
  },
  docs: {
    get: { summary: 'A folder with its children' },
    update: { summary: 'Rename and/or move a folder' },
  },
});
