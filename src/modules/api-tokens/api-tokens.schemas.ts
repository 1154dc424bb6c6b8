import { Type } from 'typebox';
import { listQuerySchema } from '../../shared/pagination.js';
import { Nullable, named, Timestamp, Uuid } from '../../shared/schemas.js';

const Kind = Type.Union([Type.Literal('management'), Type.Literal('delivery')], {
  description: "`delivery`: read-only, published records only, the content groups' `.view` scopes (decisions G13)",
});
const Status = Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]);
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 300,
  description: "Catalog scopes (GET /permissions); each must be held by the calling token and by the user's role",
});
const FutureDate = Type.String({ format: 'date-time', description: 'A future date-time (ISO 8601)' });

const tokenFields = {
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  kind: Kind,
  scopes: Type.Array(Type.String(), { description: 'The scopes stored on the token' }),
  effectiveScopes: Type.Array(Type.String(), { description: "What it may do: its scopes that its user's role also holds" }),
  user: Type.Object({ id: Uuid, fullName: Type.String() }),
  tokenPrefix: Type.String({ description: 'The start of the value (`cairn_` and 8 hex digits), to recognise it' }),
  status: Status,
  lastUsedAt: Nullable(Type.String({ format: 'date-time', description: 'To the minute' })),
  expiresAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

const tokenExample = {
  id: 'a4c81f3e-0d27-4b59-9e6a-5f12c8b7d3e0',
  name: 'Website build',
  description: 'Reads published contents for the static site',
  kind: 'delivery' as const,
  scopes: ['contents.view', 'categories.view', 'tags.view'],
  effectiveScopes: ['contents.view', 'categories.view', 'tags.view'],
  user: { id: '3f8e2b71-5c4d-4a9e-8b16-7d2c9e0f1a53', fullName: 'Ada Lovelace' },
  tokenPrefix: 'cairn_a4c81f3e',
  status: 'active' as const,
  lastUsedAt: '2026-03-21T07:58:00.000Z',
  expiresAt: null,
  revokedAt: null,
  createdAt: '2026-01-12T11:25:00.000Z',
  updatedAt: '2026-01-12T11:25:00.000Z',
};
export const ApiTokenRef = named('ApiToken', Type.Object(tokenFields), [tokenExample]);
export const ApiTokenWithValueRef = named(
  'ApiTokenWithValue',
  Type.Object({
    ...tokenFields,
    token: Type.String({ description: 'The value `cairn_<id>_<secret>`: shown only in this answer; only its SHA-256 is stored' }),
  }),
  [{ ...tokenExample, lastUsedAt: null, token: 'cairn_a4c81f3e0d274b599e6a5f12c8b7d3e0_q8Zt3kV0yN1mR6wB2xJ5hL9pC4sD7fG0aE3uT8iO1nM' }],
);

export const TokenCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    kind: Type.Optional(Kind),
    scopes: Type.Optional(Scopes),
    preset: Type.Optional(
      Type.Union([Type.Literal('read-only'), Type.Literal('full-access')], {
        description: "Instead of scopes: `read-only` = the caller's `.view` scopes, `full-access` = all the caller's scopes (each within the user's role)",
      }),
    ),
    expiresAt: Type.Optional(Nullable(FutureDate)),
    expiresInDays: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 3650 }))),
    userId: Type.Optional(Type.String({ format: 'uuid', description: "The user the token acts as (default: the caller's user)" })),
  },
  {
    examples: [
      {
        name: 'Website build',
        description: 'Reads published contents for the static site',
        kind: 'delivery',
        scopes: ['contents.view', 'categories.view', 'tags.view'],
      },
    ],
  },
);

export const TokenUpdate = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  scopes: Type.Optional(Scopes),
  expiresAt: Type.Optional(Nullable(FutureDate)),
});

export const TokenRegenerate = Type.Object({
  expiresAt: Type.Optional(Nullable(FutureDate)),
});

export const TokenListQuery = listQuerySchema(
  ['created_at', 'last_used_at', 'name', 'expires_at'],
  {
    status: Type.Optional(Type.Array(Status, { maxItems: 3, description: 'Default: active and expired (`status=revoked` lists revoked ones)' })),
    kind: Type.Optional(Kind),
    userId: Type.Optional(Type.String({ format: 'uuid' })),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'In the name, ignoring case' })),
  },
  { defaultSort: 'created_at (newest first)' },
);
