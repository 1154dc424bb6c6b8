import { Type } from 'typebox';
import { Data, Message, named, ref, Uuid } from '../../shared/schemas.js';
import type { AppModule } from '../types.js';
import { FolderDetail, mediaFolders, ParentId } from './media-folders.resource.js';
import * as service from './media-folders.service.js';

const tags = ['Media folders'];
const Params = Type.Object({ id: Uuid });
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
    const r = mediaFolders.routes(db);
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
          response: { 200: Type.Object({ data: Type.Array(ref(mediaFolders.schemas.Schema)) }) },
        },
      },
      async (req) => ({ data: await service.listFolders(db, req.auth.siteId, req.query) }),
    );

    app.route(r.create);
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

    app.route(r.get);
    app.route(r.update);
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
      async (req) => ({ data: await mediaFolders.service.update(db, req.auth.siteId, req.params.id, { parentId: req.body.parentId }) }),
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
