import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { Data, Message, Paginated, ref, Uuid } from '../../shared/schemas.js';
import { retentionTask } from '../../jobs/retention.js';
import { ApiTokenRef, ApiTokenWithValueRef, TokenCreate, TokenListQuery, TokenRegenerate, TokenUpdate } from './api-tokens.schemas.js';
import { deleteRevokedTokens } from './api-tokens.repository.js';
import * as service from './api-tokens.service.js';

const tags = ['API tokens'];
const Params = Type.Object({ id: Uuid });
const forbidden = {
  $ref: 'Error#',
  description: "`MISSING_SCOPE`, `SCOPE_ESCALATION` (scopes you or the user's role do not hold) or `TOKEN_NOT_MANAGEABLE` (a token stronger than yours)",
};
const notActive = { $ref: 'Error#', description: '`TOKEN_NOT_ACTIVE`: the token is revoked' };
/** Revoked tokens are listed (`status=revoked`) for 90 days, then purged (design section 3). */
const REVOKED_TOKEN_DAYS = 90;

/** API tokens (decisions U3, U4): the value is shown once; a token never grants more than its caller holds. */
export const apiTokensModule: AppModule = {
  name: 'api-tokens',
  routes(app, { db }) {
    app.get(
      '/api-tokens',
      {
        config: { scope: 'api_tokens.view' },
        schema: {
          tags,
          operationId: 'listApiTokens',
          summary: 'List tokens (never their values)',
          querystring: TokenListQuery,
          response: { 200: Paginated(ref(ApiTokenRef)) },
        },
      },
      async (req) => service.listSiteTokens(db, req.auth.siteId, req.query),
    );

    app.post(
      '/api-tokens',
      {
        config: { scope: 'api_tokens.create' },
        schema: {
          tags,
          operationId: 'createApiToken',
          summary: 'Create a token; the answer shows its value, once',
          description:
            "Give `scopes` or a `preset`. Every scope must be held by the calling token and by the user's role (403 `SCOPE_ESCALATION`, nothing stored). " +
            '`expiresAt` (future) or `expiresInDays`, or neither for a token that never expires.',
          body: TokenCreate,
          response: { 201: Data(ref(ApiTokenWithValueRef)), 403: forbidden },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.issueToken(db, req.auth, req.auth.siteId, req.body) }),
    );

    app.get(
      '/api-tokens/:id',
      {
        config: { scope: 'api_tokens.view' },
        schema: { tags, operationId: 'getApiToken', summary: 'Get a token (never its value)', params: Params, response: { 200: Data(ref(ApiTokenRef)) } },
      },
      async (req) => ({ data: service.toToken(await service.getToken(db, req.auth.siteId, req.params.id)) }),
    );

    app.put(
      '/api-tokens/:id',
      {
        config: { scope: 'api_tokens.update' },
        schema: {
          tags,
          operationId: 'updateApiToken',
          summary: 'Update a token (partial): name, description, scopes, expiry',
          description: 'Only tokens whose scopes the caller holds (403 `TOKEN_NOT_MANAGEABLE`); new scopes as on create.',
          params: Params,
          body: TokenUpdate,
          response: { 200: Data(ref(ApiTokenRef)), 403: forbidden },
        },
      },
      async (req) => ({ data: await service.updateSiteToken(db, req.auth, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/api-tokens/:id',
      {
        config: { scope: 'api_tokens.delete' },
        schema: {
          tags,
          operationId: 'deleteApiToken',
          summary: 'Revoke a token: it answers 401 TOKEN_REVOKED from the next request, on every instance',
          params: Params,
          response: { 200: Message, 403: forbidden, 409: notActive },
        },
      },
      async (req) => {
        await service.deleteSiteToken(db, req.auth, req.auth.siteId, req.params.id);
        return { message: 'Token revoked.' };
      },
    );

    app.post(
      '/api-tokens/:id/regenerate',
      {
        config: { scope: 'api_tokens.regenerate' },
        schema: {
          tags,
          operationId: 'regenerateApiToken',
          summary: 'A new value for a token (same id, scopes and expiry); the old value answers 401 from the next request, on every instance',
          params: Params,
          body: Type.Optional(TokenRegenerate),
          response: { 200: Data(ref(ApiTokenWithValueRef)), 403: forbidden, 409: notActive },
        },
      },
      async (req) => ({ data: await service.regenerateToken(db, req.auth, req.auth.siteId, req.params.id, req.body ?? {}) }),
    );
  },

  jobs(worker) {
    worker.task('retention.api_tokens', retentionTask(REVOKED_TOKEN_DAYS, deleteRevokedTokens));
  },
};
