import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { route } from '../../kit/resource.js';
import { users } from './users.resource.js';

const ownerProtected = { $ref: 'Error#', description: '`OWNER_PROTECTED`: the owner cannot be demoted, deactivated or deleted' };
const escalation = { $ref: 'Error#', description: '`MISSING_SCOPE` (`users.manage_roles`), `SCOPE_ESCALATION` (a role with scopes you do not hold)' };
const MANAGE_ROLES = { scope: 'users.manage_roles' as const, when: 'when the body sets roleId (on create: a role other than author)' };
const DeleteQuery = Type.Object({
  reassignTo: Type.Optional(Type.String({ format: 'uuid', description: "The user who becomes the author of the deleted user's contents" })),
});

/** Users (decisions U2, the resource kit); writes carry the caller, whose scopes bound the roles it may give (U4). */
export const usersModule: AppModule = {
  name: 'users',
  routes(app, { db }) {
    const r = users.routes(db);
    const schema = (name: keyof typeof r) => r[name].schema as Record<string, any>;
    app.route(r.list);
    app.route(
      route({
        ...r.create,
        config: { ...r.create.config, conditionalScopes: [MANAGE_ROLES] },
        schema: { ...schema('create'), response: { ...schema('create').response, 403: escalation } },
        handler: async (req, reply) => reply.code(201).send({ data: await users.service.create(db, req.auth.siteId, req.body, { caller: req.auth }) }),
      }),
    );
    app.route(r.get);
    app.route(
      route({
        ...r.update,
        config: { ...r.update.config, conditionalScopes: [MANAGE_ROLES] },
        schema: { ...schema('update'), response: { ...schema('update').response, 403: escalation, 409: ownerProtected } },
        handler: async (req) => ({ data: await users.service.update(db, req.auth.siteId, req.params.id, req.body, { caller: req.auth }) }),
      }),
    );
    app.route(
      route({
        ...r.delete,
        schema: { ...schema('delete'), querystring: DeleteQuery, response: { ...schema('delete').response, 409: ownerProtected } },
        handler: async (req) => {
          await users.service.delete(db, req.auth.siteId, req.params.id, { caller: req.auth, reassignTo: req.query.reassignTo });
          return { message: 'User deleted.' };
        },
      }),
    );
  },
};
