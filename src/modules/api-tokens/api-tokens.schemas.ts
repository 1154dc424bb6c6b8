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

export const ApiTokenRef = named('ApiToken', Type.Object(tokenFields));
export const ApiTokenWithValueRef = named(
  'ApiTokenWithValue',
  Type.Object({
    ...tokenFields,
    token: Type.String({ description: 'The value `cairn_<id>_<secret>`: shown only in this answer; only its SHA-256 is stored' }),
  }),
);

export const TokenCreate = Type.Object({
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
});

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
