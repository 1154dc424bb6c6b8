import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { Data, Message, ref, Uuid } from '../../shared/schemas.js';
import { parseScopes } from '../api-tokens/api-tokens.service.js';
import { PermissionRef, RoleCreate, RoleDeleteQuery, RoleRef, RoleUpdate } from './roles.schemas.js';
import * as service from './roles.service.js';

const tags = ['Roles and permissions'];
const Params = Type.Object({ id: Uuid });
const conflict = { $ref: 'Error#', description: '`ROLE_PROTECTED` (the owner role) or `ROLE_IN_USE`' };
const escalation = { $ref: 'Error#', description: '`MISSING_SCOPE` (e.g. `permissions.assign`) or `SCOPE_ESCALATION` (scopes you do not hold)' };
const ASSIGN = { scope: 'permissions.assign' as const, when: 'when the body sets scopes' };

/** Roles (decisions U1) and the permission catalog (U1, X1). */
export const rolesModule: AppModule = {
  name: 'roles',
  routes(app, { db }) {
    app.get(
      '/permissions',
      {
        config: { scope: 'permissions.view' },
        schema: {
          tags,
          operationId: 'listPermissions',
          summary: 'Every scope of the catalog, with its area and whether an endpoint uses it',
          response: { 200: Data(Type.Array(ref(PermissionRef))) },
        },
      },
      async (req) => ({ data: service.permissionCatalog(req.server.routeTable) }),
    );

    app.get(
      '/roles',
      {
        config: { scope: 'roles.view' },
        schema: {
          tags,
          operationId: 'listRoles',
          summary: "The site's roles (at most a few dozen: not paginated)",
          response: { 200: Data(Type.Array(ref(RoleRef))) },
        },
      },
      async (req) => ({ data: await service.listRoles(db, req.auth.siteId) }),
    );

    app.post(
      '/roles',
      {
        config: { scope: 'roles.create', conditionalScopes: [ASSIGN] },
        schema: {
          tags,
          operationId: 'createRole',
          summary: 'Create a role',
          description:
            'Every scope given must be held by the calling token (403 `SCOPE_ESCALATION`). A name used by another role (any case) is a 422 `NAME_TAKEN`.',
          body: RoleCreate,
          response: { 201: Data(ref(RoleRef)), 403: escalation },
        },
      },
      async (req, reply) => {
        parseScopes(req.body.scopes, 'management');
        return reply.code(201).send({ data: await service.createRole(db, req.auth, req.auth.siteId, req.body) });
      },
    );

    app.get(
      '/roles/:id',
      {
        config: { scope: 'roles.view' },
        schema: { tags, operationId: 'getRole', summary: 'Get a role', params: Params, response: { 200: Data(ref(RoleRef)) } },
      },
      async (req) => ({ data: service.toRole(await service.getRole(db, req.auth.siteId, req.params.id)) }),
    );

    app.put(
      '/roles/:id',
      {
        config: { scope: 'roles.update', conditionalScopes: [ASSIGN] },
        schema: {
          tags,
          operationId: 'updateRole',
          summary: 'Update a role (partial)',
          description: "The owner role answers 409 `ROLE_PROTECTED`. New scopes reach the role's users' tokens on their next request.",
          params: Params,
          body: RoleUpdate,
          response: { 200: Data(ref(RoleRef)), 403: escalation, 409: conflict },
        },
      },
      async (req) => {
        if (req.body.scopes) parseScopes(req.body.scopes, 'management');
        return { data: await service.updateRole(db, req.auth, req.auth.siteId, req.params.id, req.body) };
      },
    );

    app.delete(
      '/roles/:id',
      {
        config: { scope: 'roles.delete' },
        schema: {
          tags,
          operationId: 'deleteRole',
          summary: 'Delete a role; its users move to reassignTo',
          params: Params,
          querystring: RoleDeleteQuery,
          response: { 200: Message, 403: escalation, 409: conflict },
        },
      },
      async (req) => {
        await service.deleteRole(db, req.auth, req.auth.siteId, req.params.id, req.query.reassignTo);
        return { message: 'Role deleted.' };
      },
    );
  },
};
