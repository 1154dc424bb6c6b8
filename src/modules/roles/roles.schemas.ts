import { Type } from 'typebox';
import { Nullable, named } from '../../shared/schemas.js';

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
