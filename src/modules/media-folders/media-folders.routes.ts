import { Type } from 'typebox';
import { Data, Message, Nullable, named, ref, Timestamp, Uuid } from '../../shared/schemas.js';
import type { AppModule } from '../types.js';
import * as service from './media-folders.service.js';

const tags = ['Media folders'];
const Params = Type.Object({ id: Uuid });
const FolderName = Type.String({ minLength: 1, maxLength: 255, description: 'Unique within its parent, whatever the case' });
const ParentId = Nullable({ ...Uuid, description: 'The parent folder; null for the top level' });

const FolderSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  mediaCount: Type.Integer({ description: "The folder's own files, trashed ones left out" }),
});
const Folder = named(
  'MediaFolder',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    parentId: Nullable(Type.String({ format: 'uuid' })),
    mediaCount: Type.Integer({ description: "The folder's own files, trashed ones left out" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
);
const FolderDetail = named('MediaFolderDetail', Type.Object({ ...Folder.properties, children: Type.Array(FolderSummary) }));
const TreeNode = named(
  'MediaFolderTreeNode',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    mediaCount: Type.Integer(),
    children: Type.Array(Type.Unsafe<unknown>({ $ref: 'MediaFolderTreeNode#' })),
  }),
);

/** Media folders (spec "Media folders", decisions M6): at most 3 levels, names unique within a parent. */
export const mediaFoldersModule: AppModule = {
  name: 'media-folders',
  routes(app, { db, storage }) {
    app.get(
      '/media-folders',
      {
        config: { scope: 'media.view' },
        schema: {
          tags,
          operationId: 'listMediaFolders',
          summary: 'Every folder, flat, by name',
          querystring: Type.Object({
            parentId: Type.Optional(Type.Union([Uuid, Type.Literal('root')], { description: 'Only the children of this folder (`root`: the top level)' })),
            search: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Case-insensitive part of the name' })),
          }),
          response: { 200: Type.Object({ data: Type.Array(ref(Folder)) }) },
        },
      },
      async (req) => ({ data: await service.listFolders(db, req.auth.siteId, req.query) }),
    );

    app.post(
      '/media-folders',
      {
        config: { scope: 'media.update' },
        schema: {
          tags,
          operationId: 'createMediaFolder',
          summary: 'Create a folder',
          body: Type.Object({ name: FolderName, parentId: Type.Optional(ParentId) }),
          response: { 201: Data(ref(FolderDetail)) },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createFolder(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/media-folders/tree',
      {
        config: { scope: 'media.view' },
        schema: {
          tags,
          operationId: 'getMediaFolderTree',
          summary: 'Every folder, nested, by name',
          response: { 200: Type.Object({ data: Type.Array(ref(TreeNode)) }) },
        },
      },
      async (req) => ({ data: await service.folderTree(db, req.auth.siteId) }),
    );

    app.post(
      '/media-folders/move-media',
      {
        config: { scope: 'media.update' },
        schema: {
          tags,
          operationId: 'moveMediaToFolder',
          summary: 'Move files into a folder (null: outside any folder)',
          description: 'Only files of this site are moved and counted; others are skipped.',
          body: Type.Object({ mediaIds: Type.Array(Uuid, { minItems: 1, maxItems: 100 }), folderId: ParentId }),
          response: { 201: Type.Object({ moved: Type.Integer() }) },
        },
      },
      async (req, reply) => reply.code(201).send(await service.moveMedia(db, req.auth.siteId, req.body.mediaIds, req.body.folderId)),
    );

    app.get(
      '/media-folders/:id',
      {
        config: { scope: 'media.view' },
        schema: { tags, operationId: 'getMediaFolder', summary: 'A folder with its children', params: Params, response: { 200: Data(ref(FolderDetail)) } },
      },
      async (req) => ({ data: await service.getFolder(db, req.auth.siteId, req.params.id) }),
    );

    app.put(
      '/media-folders/:id',
      {
        config: { scope: 'media.update' },
        schema: {
          tags,
          operationId: 'updateMediaFolder',
          summary: 'Rename and/or move a folder',
          params: Params,
          body: Type.Object({ name: Type.Optional(FolderName), parentId: Type.Optional(ParentId) }, { minProperties: 1 }),
          response: { 200: Data(ref(FolderDetail)) },
        },
      },
      async (req) => ({ data: await service.updateFolder(db, req.auth.siteId, req.params.id, req.body) }),
    );

    app.post(
      '/media-folders/:id/move',
      {
        config: { scope: 'media.update' },
        schema: {
          tags,
          operationId: 'moveMediaFolder',
          summary: 'Move a folder under another (null: the top level)',
          description: 'Under itself or a subfolder, or deeper than 3 levels counting its own subfolders, is a 422.',
          params: Params,
          body: Type.Object({ parentId: ParentId }),
          response: { 200: Data(ref(FolderDetail)) },
        },
      },
      async (req) => ({ data: await service.updateFolder(db, req.auth.siteId, req.params.id, { parentId: req.body.parentId }) }),
    );

    app.delete(
      '/media-folders/:id',
      {
        config: { scope: 'media.delete' },
        schema: {
          tags,
          operationId: 'deleteMediaFolder',
          summary: 'Delete a folder',
          description: '`action=move` (default): its files and subfolders go to its parent. `action=delete`: its files and subfolders are removed permanently.',
          params: Params,
          querystring: Type.Object({ action: Type.Optional(Type.Union([Type.Literal('move'), Type.Literal('delete')], { default: 'move' })) }),
          response: { 200: Message },
        },
      },
      async (req) => {
        await service.deleteFolder(db, storage, req.auth.siteId, req.params.id, req.query.action ?? 'move');
        return { message: 'Folder deleted.' };
      },
    );
  },
};
