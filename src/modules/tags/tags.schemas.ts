import { Type } from 'typebox';
import { CommonFilters } from '../../shared/list-filters.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { Locale, Nullable, Timestamp } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';

export const Tag = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  locale: Type.String(),
  translationGroup: Type.String({ format: 'uuid' }),
  contentCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Slug = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: SLUG_PATTERN,
  description: 'Lower-case letters, digits and hyphens; generated from the name when omitted',
});

export const TagCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slug: Type.Optional(Slug),
  description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  locale: Type.Optional(Locale),
  translationGroup: Type.Optional(Type.String({ format: 'uuid', description: 'Join an existing translation group' })),
});

export const TagUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { minProperties: 1 },
);

export const TagListQuery = listQuerySchema(['created_at', 'updated_at', 'name', 'slug'], CommonFilters, { defaultSort: 'created_at desc' });
