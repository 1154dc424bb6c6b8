import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { Data, ref } from '../../shared/schemas.js';
import { route } from '../../kit/resource.js';
import { PermissionRef, RoleDeleteQuery } from './roles.schemas.js';
import { roles } from './roles.resource.js';
import * as service from './roles.service.js';

const conflict = { $ref: 'Error#', description: '`ROLE_PROTECTED` (the owner role) or `ROLE_IN_USE`' };
const escalation = { $ref: 'Error#', description: '`MISSING_SCOPE` (e.g. `permissions.assign`) or `SCOPE_ESCALATION` (scopes you do not hold)' };
const ASSIGN = { scope: 'permissions.assign' as const, when: 'when the body sets scopes' };

/** Roles (decisions U1, the resource kit) and the permission catalog (U1, X1). */
export const rolesModule: AppModule = {
  name: 'roles',
  routes(app, { db }) {
    const r = roles.routes(db);
    const schema = (name: keyof typeof r) => r[name].schema as Record<string, any>;
    app.get(
      '/permissions',
      {
        config: { scope: 'permissions.view' },
        schema: {
          tags: roles.tags,
          operationId: 'listPermissions',
          summary: 'Every scope of the catalog, with its area and whether an endpoint uses it',
          response: { 200: Data(Type.Array(ref(PermissionRef))) },
        },
      },
      async (req) => ({ data: service.permissionCatalog(req.server.routeTable) }),
    );
    // Not paginated: a site has a few dozen roles at most.
    app.route(
      route({
        ...r.list,
        schema: {
          ...withoutQuery(schema('list')),
          summary: "The site's roles, oldest first (not paginated)",
          response: { 200: Data(Type.Array(ref(roles.schemas.Schema))) },
        },
        handler: async (req) => ({ data: await service.listRoles(db, req.auth.siteId) }),
      }),
    );
    // Writes carry the caller, whose scopes bound what it may grant (decisions U4).
    app.route(
      route({
        ...r.create,
        config: { ...r.create.config, conditionalScopes: [ASSIGN] },
        schema: { ...schema('create'), response: { ...schema('create').response, 403: escalation } },
        handler: async (req, reply) => reply.code(201).send({ data: await roles.service.create(db, req.auth.siteId, req.body, { caller: req.auth }) }),
      }),
    );
    app.route(r.get);
    app.route(
      route({
        ...r.update,
        config: { ...r.update.config, conditionalScopes: [ASSIGN] },
        schema: { ...schema('update'), response: { ...schema('update').response, 403: escalation, 409: conflict } },
        handler: async (req) => ({ data: await roles.service.update(db, req.auth.siteId, req.params.id, req.body, { caller: req.auth }) }),
      }),
    );
    app.route(
      route({
        ...r.delete,
        schema: { ...schema('delete'), querystring: RoleDeleteQuery, response: { ...schema('delete').response, 403: escalation, 409: conflict } },
        handler: async (req) => {
          await roles.service.delete(db, req.auth.siteId, req.params.id, { caller: req.auth, reassignTo: req.query.reassignTo });
          return { message: 'Role deleted.' };
        },
      }),
    );
  },
};

/** The list's schema without its query: a key left undefined makes Fastify warn that the schema is missing. */
function withoutQuery<S extends { querystring?: unknown }>({ querystring: _unused, ...rest }: S) {
  return rest;
}
