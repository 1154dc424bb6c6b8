import { Type } from 'typebox';
import { CommonFilters } from '../../shared/list-filters.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { Locale, Nullable, PageMeta, Timestamp } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';

export const CHANGEFREQS = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
const Changefreq = Type.Union(CHANGEFREQS.map((c) => Type.Literal(c)));
const ContentMode = Type.Union([Type.Literal('standard'), Type.Literal('structured')]);
const SchemaSource = Type.Union([Type.Literal('own'), Type.Literal('inherit')], {
  description: '`inherit` takes the field schema of the nearest ancestor that has its own',
});
/** A field schema: an array of field definitions (or `{ fields: [...] }`), validated by the field-schema engine. */
const FieldSchemaInput = Type.Union(
  [
    Type.Array(Type.Object({}, { additionalProperties: true })),
    Type.Object({ fields: Type.Array(Type.Object({}, { additionalProperties: true })) }),
    Type.Null(),
  ],
  { description: 'Field definitions `{ name, type, label, ... }`: 17 types, at most 250 per level and 5 levels' },
);
const FieldSchemaOut = Nullable(Type.Array(Type.Object({}, { additionalProperties: true })));

export const Category = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  image: Nullable(Type.String()),
  parentId: Nullable(Type.Integer()),
  locale: Type.String(),
  translationGroup: Type.String({ format: 'uuid' }),
  contentCount: Type.Integer(),
  sitemapPriority: Nullable(Type.Number()),
  sitemapChangefreq: Nullable(Changefreq),
  contentMode: ContentMode,
  schema: FieldSchemaOut,
  schemaSource: SchemaSource,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const CategoryDetail = Type.Object({
  ...Category.properties,
  parent: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String() })),
  effectiveSchema: Type.Union([FieldSchemaOut], { description: 'The schema contents of this category are validated against (own or inherited)' }),
  contents: Type.Object({
    data: Type.Array(Type.Object({ id: Type.Integer(), title: Type.String(), slug: Type.String(), status: Type.String() })),
    meta: PageMeta,
  }),
});

const Slug = Type.String({ minLength: 1, maxLength: 255, pattern: SLUG_PATTERN, description: 'Generated from the name when omitted' });
const fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slug: Slug,
  description: Nullable(Type.String({ maxLength: 5000 })),
  image: Nullable(Type.String({ minLength: 1, maxLength: 2048, description: 'Image URL' })),
  parentId: Nullable(Type.Integer({ minimum: 1 })),
  sitemapPriority: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  sitemapChangefreq: Nullable(Changefreq),
  contentMode: ContentMode,
  schema: FieldSchemaInput,
  schemaSource: SchemaSource,
};

export const CategoryCreate = Type.Object({
  name: fields.name,
  slug: Type.Optional(fields.slug),
  description: Type.Optional(fields.description),
  image: Type.Optional(fields.image),
  parentId: Type.Optional(fields.parentId),
  locale: Type.Optional(Locale),
  translationGroup: Type.Optional(Type.String({ format: 'uuid', description: 'Join an existing translation group' })),
  sitemapPriority: Type.Optional(fields.sitemapPriority),
  sitemapChangefreq: Type.Optional(fields.sitemapChangefreq),
  contentMode: Type.Optional(fields.contentMode),
  schema: Type.Optional(fields.schema),
  schemaSource: Type.Optional(fields.schemaSource),
});

export const CategoryUpdate = Type.Object(
  {
    name: Type.Optional(fields.name),
    slug: Type.Optional(fields.slug),
    description: Type.Optional(fields.description),
    image: Type.Optional(fields.image),
    parentId: Type.Optional(fields.parentId),
    sitemapPriority: Type.Optional(fields.sitemapPriority),
    sitemapChangefreq: Type.Optional(fields.sitemapChangefreq),
    contentMode: Type.Optional(fields.contentMode),
    schema: Type.Optional(fields.schema),
    schemaSource: Type.Optional(fields.schemaSource),
  },
  { minProperties: 1 },
);

export const CategoryListQuery = listQuerySchema(
  ['created_at', 'updated_at', 'name', 'slug'],
  {
    ...CommonFilters,
    parentId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('null')], { description: 'Children of this category; `null` for roots' })),
    isRoot: Type.Optional(Type.Boolean({ description: 'Only root categories (true) or only children (false)' })),
    includeChildren: Type.Optional(Type.Boolean({ description: 'With parentId: all descendants, not only direct children' })),
  },
  { defaultSort: 'created_at desc' },
);

export const CategoryDetailQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1, description: "Page of the category's contents" }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 15, description: 'Contents per page' }),
});

export interface TreeNode {
  id: number;
  name: string;
  slug: string;
  contentCount: number;
  children: TreeNode[];
}
/** Registered once with addSchema: the tree is recursive, so it is a named, self-referencing schema. */
export const TreeNodeSchema = {
  $id: 'CategoryTreeNode',
  title: 'CategoryTreeNode',
  type: 'object',
  required: ['id', 'name', 'slug', 'contentCount', 'children'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    slug: { type: 'string' },
    contentCount: { type: 'integer' },
    children: { type: 'array', items: { $ref: 'CategoryTreeNode#' } },
  },
} as const;
export const TreeResponse = Type.Unsafe<{ data: TreeNode[] }>({
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: { $ref: 'CategoryTreeNode#' } } },
});

export const TreeQuery = Type.Object({ locale: Type.Optional(Locale) });
