import { Type } from 'typebox';
import { Nullable, named, Timestamp, Uuid } from '../../shared/schemas.js';

export const ScopeList = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 300,
  description: 'Catalog scopes (GET /permissions lists them); an unknown one is a 422 on `scopes[i]`',
});

export const RoleRef = named(
  'Role',
  Type.Object({
    id: Uuid,
    slug: Type.String({ description: 'Fixed at creation: owner, administrator, editor, author, viewer, or made from the name' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    scopes: Type.Array(Type.String(), { description: 'The owner role holds every scope of the catalog' }),
    isSystem: Type.Boolean({ description: 'The owner role: cannot be changed, deleted or given to another user' }),
    userCount: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
);

export const RoleCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique per site, ignoring case' }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  scopes: ScopeList,
});

export const RoleUpdate = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  scopes: Type.Optional(ScopeList),
});

export const RoleDeleteQuery = Type.Object({
  reassignTo: Type.Optional(Type.String({ format: 'uuid', description: 'The role its users move to (needed when users hold it)' })),
});

export const PermissionRef = named(
  'Permission',
  Type.Object({
    scope: Type.String(),
    area: Type.String({ description: "The spec's group of the scope" }),
    description: Type.String(),
    ownOf: Nullable(Type.String({ description: "For a `.own` scope, the plain scope it narrows to records the token's user authored" })),
    deliveryAllowed: Type.Boolean({ description: 'Whether a delivery token may hold it (decisions G13)' }),
    implemented: Type.Boolean({ description: 'Whether any endpoint uses it; commerce, invoicing, calendars, reviews and AI do not (decisions X1)' }),
  }),
);
