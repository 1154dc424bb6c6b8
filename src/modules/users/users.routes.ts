import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { Data, Message, Paginated, ref, Uuid } from '../../shared/schemas.js';
import { UserCreate, UserDeleteQuery, UserListQuery, UserRef, UserUpdate } from './users.schemas.js';
import * as service from './users.service.js';

const tags = ['Users'];
const Params = Type.Object({ id: Uuid });
const ownerProtected = { $ref: 'Error#', description: '`OWNER_PROTECTED`: the owner cannot be demoted, deactivated or deleted' };
const escalation = { $ref: 'Error#', description: '`MISSING_SCOPE` (`users.manage_roles`), `SCOPE_ESCALATION` (a role with scopes you do not hold)' };
const MANAGE_ROLES = { scope: 'users.manage_roles' as const, when: 'when the body sets roleId (on create: a role other than author)' };

/** Users (decisions U2): records for authorship and for owning tokens; no passwords, no logins. */
export const usersModule: AppModule = {
  name: 'users',
  routes(app, { db }) {
    app.get(
      '/users',
      {
        config: { scope: 'users.view' },
        schema: { tags, operationId: 'listUsers', summary: 'List users', querystring: UserListQuery, response: { 200: Paginated(ref(UserRef)) } },
      },
      async (req) => service.listUsers(db, req.auth.siteId, req.query),
    );

    app.post(
      '/users',
      {
        config: { scope: 'users.create', conditionalScopes: [MANAGE_ROLES] },
        schema: {
          tags,
          operationId: 'createUser',
          summary: 'Create a user',
          description:
            'Inviting someone is a user plus a token made for them (`POST /api-tokens` with `userId`). 422 `EMAIL_TAKEN` for an e-mail of another user.',
          body: UserCreate,
          response: { 201: Data(ref(UserRef)), 403: escalation },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createUser(db, req.auth, req.auth.siteId, req.body) }),
    );

    app.get(
      '/users/:id',
      {
        config: { scope: 'users.view' },
        schema: { tags, operationId: 'getUser', summary: 'Get a user', params: Params, response: { 200: Data(ref(UserRef)) } },
      },
      async (req) => ({ data: service.toUser(await service.getUser(db, req.auth.siteId, req.params.id)) }),
    );

    app.put(
      '/users/:id',
      {
        config: { scope: 'users.update', conditionalScopes: [MANAGE_ROLES] },
        schema: {
          tags,
          operationId: 'updateUser',
          summary: 'Update a user (partial)',
          description: "A new role or deactivation reaches the user's tokens on their next request.",
          params: Params,
          body: UserUpdate,
          response: { 200: Data(ref(UserRef)), 403: escalation, 409: ownerProtected },
        },
      },
      async (req) => ({ data: await service.updateUser(db, req.auth, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/users/:id',
      {
        config: { scope: 'users.delete' },
        schema: {
          tags,
          operationId: 'deleteUser',
          summary: 'Delete a user with their tokens',
          description: 'Their contents go to `reassignTo`, or keep no author; revisions keep their history without it.',
          params: Params,
          querystring: UserDeleteQuery,
          response: { 200: Message, 409: ownerProtected },
        },
      },
      async (req) => {
        await service.deleteUser(db, req.auth.siteId, req.params.id, req.query.reassignTo);
        return { message: 'User deleted.' };
      },
    );
  },
};
