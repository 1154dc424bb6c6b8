import { Type } from 'typebox';
import { listQuerySchema } from '../../shared/pagination.js';
import { Nullable, named, Timestamp, Uuid } from '../../shared/schemas.js';

export const UserRef = named(
  'User',
  Type.Object({
    id: Uuid,
    fullName: Type.String(),
    email: Nullable(Type.String({ description: 'Lower-cased; unique per site' })),
    role: Type.Object({ id: Uuid, slug: Type.String(), name: Type.String() }),
    isActive: Type.Boolean({ description: "An inactive user's tokens answer 401 TOKEN_REVOKED" }),
    isOwner: Type.Boolean({ description: 'The one owner of the site: cannot be demoted, deactivated or deleted' }),
    tokenCount: Type.Integer({ description: 'Tokens not revoked' }),
    lastActiveAt: Nullable(Type.String({ format: 'date-time', description: 'The latest lastUsedAt of their tokens' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
);

const Email = Nullable(Type.String({ format: 'email', maxLength: 254 }));

export const UserCreate = Type.Object({
  fullName: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.Optional(Email),
  roleId: Type.Optional(Type.String({ format: 'uuid', description: 'Default: the author role. Another role needs users.manage_roles' })),
  isActive: Type.Optional(Type.Boolean()),
});

export const UserUpdate = Type.Object({
  fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  email: Type.Optional(Email),
  roleId: Type.Optional(Type.String({ format: 'uuid', description: 'Needs users.manage_roles' })),
  isActive: Type.Optional(Type.Boolean()),
});

export const UserListQuery = listQuerySchema(
  ['created_at', 'full_name', 'email'],
  {
    roleId: Type.Optional(Type.String({ format: 'uuid' })),
    isActive: Type.Optional(Type.Boolean()),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'In the name and the e-mail, ignoring case' })),
  },
  { defaultSort: 'created_at' },
);

export const UserDeleteQuery = Type.Object({
  reassignTo: Type.Optional(Type.String({ format: 'uuid', description: "The user who becomes the author of the deleted user's contents" })),
});
