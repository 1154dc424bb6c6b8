import { Type } from 'typebox';
import type { Executor } from '../../db/types.js';
import { common, fieldMap, nullableNumber } from '../../kit/fields.js';
import { translatableResource } from '../../kit/translatable.js';
import { pageMeta } from '../../shared/pagination.js';
import { Id, Locale, UrlOrPath, Nullable, named, PageMeta } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';
import type { Visibility } from '../contents/contents.repository.js';
import { contentCountsByCategory, contentsOfCategory, linkedContentCounts } from '../contents/content-links.js';
import * as repo from './categories.repository.js';
import { checkTree, resolveEffective, schemaOf, storedSchema } from './categories.rules.js';

export const CHANGEFREQS = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
const Changefreq = Type.Union(CHANGEFREQS.map((c) => Type.Literal(c)));
const ContentMode = Type.Union([Type.Literal('standard'), Type.Literal('structured')]);
const SchemaSource = Type.Union([Type.Literal('own'), Type.Literal('inherit')], {
  description: '`inherit` takes the field schema of the nearest ancestor that has its own',
});
const FieldSchemaOut = Nullable(Type.Array(Type.Object({}, { additionalProperties: true })));
/** A field schema: an array of field definitions (or `{ fields: [...] }`), validated by the field-schema engine. */
const FieldSchemaInput = Type.Union(
  [
    Type.Array(Type.Object({}, { additionalProperties: true })),
    Type.Object({ fields: Type.Array(Type.Object({}, { additionalProperties: true })) }),
    Type.Null(),
  ],
  { description: 'Field definitions `{ name, type, label, ... }`: 17 types, at most 250 per level and 5 levels' },
);
const trim = (v: string) => v.trim();

/** Spec "Category": a tree per locale, optionally structured with a field schema; translatable. */
export const categoryFields = fieldMap({
  id: common.id,
  name: { column: 'name', schema: Type.String(), input: Type.String({ minLength: 1, maxLength: 255 }), create: 'required', write: trim, translated: true },
  slug: {
    column: 'slug',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 255, pattern: SLUG_PATTERN, description: 'Generated from the name when omitted' }),
  },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 5000 })), translated: true },
  image: {
    column: 'image',
    schema: Nullable(Type.String()),
    input: Nullable(UrlOrPath({ description: 'Image URL: http(s), or a path on the site' })),
    translated: true,
  },
  parentId: { column: 'parent_id', schema: Nullable(Type.Integer()), input: Nullable(Id()), read: nullableNumber },
  locale: common.locale,
  translationGroup: common.translationGroup,
  contentCount: { schema: Type.Integer({ description: 'Contents linked to this category' }) },
  sitemapPriority: {
    column: 'sitemap_priority',
    schema: Nullable(Type.Number()),
    input: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    read: nullableNumber,
  },
  sitemapChangefreq: { column: 'sitemap_changefreq', schema: Nullable(Changefreq), input: Nullable(Changefreq) },
  contentMode: { column: 'content_mode', schema: ContentMode, input: ContentMode, insertDefault: 'standard' },
  schema: { column: 'schema', schema: FieldSchemaOut, input: FieldSchemaInput, read: (v) => schemaOf({ schema: v }), write: storedSchema },
  schemaSource: { column: 'schema_source', schema: SchemaSource, input: SchemaSource, insertDefault: 'own' },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const categories = translatableResource({
  table: 'categories',
  noun: 'category',
  name: 'Category',
  plural: 'Categories',
  path: '/categories',
  scope: 'categories',
  fields: categoryFields,
  examples: {
    record: {
      id: 3,
      name: 'News',
      slug: 'news',
      description: 'Announcements from the team',
      image: null,
      parentId: null,
      locale: 'en',
      translationGroup: '5d0e8a27-9c1b-4f63-8e2d-3a7b9c4f1e05',
      contentCount: 24,
      sitemapPriority: 0.6,
      sitemapChangefreq: 'weekly',
      contentMode: 'standard',
      schema: null,
      schemaSource: 'own',
      createdAt: '2026-01-10T12:00:00.000Z',
      updatedAt: '2026-02-01T09:30:00.000Z',
    },
    create: { name: 'News', description: 'Announcements from the team', sitemapPriority: 0.6, sitemapChangefreq: 'weekly' },
  },
  list: {
    sort: ['created_at', 'updated_at', 'name', 'slug'],
    search: ['name', 'slug', 'description'],
    common: ['search', 'slug', 'slugs', 'ids', 'excludeIds', 'locale', 'translationGroup'],
    filters: {
      parentId: Type.Optional(Type.Union([Id(), Type.Literal('null')], { description: 'Children of this category; `null` for roots' })),
      isRoot: Type.Optional(Type.Boolean({ description: 'Only root categories (true) or only children (false)' })),
      includeChildren: Type.Optional(Type.Boolean({ description: 'With parentId: all descendants, not only direct children' })),
    },
    async apply(qb, query: { parentId?: number | 'null'; isRoot?: boolean; includeChildren?: boolean }, { db, siteId }) {
      if (query.isRoot === true || query.parentId === 'null') qb = qb.where('parent_id', 'is', null);
      if (query.isRoot === false) qb = qb.where('parent_id', 'is not', null);
      if (typeof query.parentId !== 'number') return qb;
      if (!query.includeChildren) return qb.where('parent_id', '=', query.parentId);
      const ids = await repo.descendantIds(db, siteId, query.parentId);
      return ids.length ? qb.where('id', 'in', ids) : qb.where('id', '=', -1);
    },
  },
  unique: [{ field: 'slug', code: 'SLUG_TAKEN', onCopy: 'free-slug' }],
  slugFrom: { field: 'name', fallback: 'category' },
  computed: linkedContentCounts('content_categories'),
  rules: {
    create: (tx, { siteId, locale, row }) =>
      checkTree(tx, siteId, { parentId: row.parent_id, locale, mode: row.content_mode, source: row.schema_source, schema: row.schema }),
    update: (tx, { siteId, current, patch }) => {
      const next = { ...current, ...patch };
      return checkTree(
        tx,
        siteId,
        {
          parentId: nullableNumber(next.parent_id) as number | null,
          locale: current.locale,
          mode: next.content_mode,
          source: next.schema_source,
          schema: next.schema,
        },
        Number(current.id),
      );
    },
    /** The copy's parent is the parent's translation in the target locale when there is one, else it becomes a root. */
    async copy(tx, { siteId, current, target, row }) {
      const parent = current.parent_id === null ? undefined : await categories.repo.find(tx, siteId, { id: Number(current.parent_id) });
      const translated = parent ? await repo.findInGroup(tx, siteId, String(parent.translation_group), target) : undefined;
      row.parent_id = translated ? Number(translated.id) : null;
    },
    /** Children move up to the deleted category's parent (or become roots); contents lose the link (spec "DELETE /categories/:id"). */
    delete: (tx, { siteId, current }) =>
      repo.reparentChildren(tx, siteId, Number(current.id), nullableNumber(current.parent_id) as number | null).then(() => undefined),
  },
  docs: {
    list: { summary: 'List categories (flat)' },
    update: { summary: 'Update a category (partial; the locale cannot change)' },
    delete: { description: "Children move to the deleted category's parent (or become roots); contents stay and lose the association." },
  },
});

export const CategoryDetail = named(
  'CategoryDetail',
  Type.Object({
    ...categoryFields.response().properties,
    parent: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String() })),
    effectiveSchema: { ...FieldSchemaOut, description: 'The schema contents of this category are validated against (own or inherited)' },
    contents: Type.Object({
      data: Type.Array(Type.Object({ id: Type.Integer(), title: Type.String(), slug: Type.String(), status: Type.String() })),
      meta: PageMeta,
    }),
  }),
);

export const CategoryDetailQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: "Page of the category's contents" }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 15, description: 'Contents per page' }),
});

/** A category with its parent, its effective schema and a page of the contents the token may see. */
export async function categoryDetail(db: Executor, siteId: string, id: number, page: { page: number; limit: number }, visibility: Visibility) {
  const row = await categories.service.getRow(db, siteId, id, 'publishedOnly' in visibility && visibility.publishedOnly === true);
  const chain = await repo.ancestors(db, siteId, nullableNumber(row.parent_id) as number | null);
  const [category] = await categories.service.present(db, siteId, [row]);
  const contents = await contentsOfCategory(db, siteId, id, page, visibility);
  const parent = chain[0];
  return {
    ...category!,
    parent: parent ? { id: Number(parent.id), name: parent.name, slug: parent.slug } : null,
    effectiveSchema: resolveEffective({ schemaSource: row.schema_source, schema: schemaOf(row as { schema: unknown }) }, chain) as never,
    contents: {
      data: contents.rows.map((c) => ({ id: Number(c.id), title: c.title, slug: c.slug, status: c.status })),
      meta: pageMeta(contents.total, page.page, page.limit),
    },
  };
}

export interface TreeNode {
  id: number;
  name: string;
  slug: string;
  contentCount: number;
  children: TreeNode[];
}

/** The tree is recursive, so it is a named, self-referencing schema. */
named(
  'CategoryTreeNode',
  Type.Unsafe<TreeNode>({
    type: 'object',
    required: ['id', 'name', 'slug', 'contentCount', 'children'],
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      slug: { type: 'string' },
      contentCount: { type: 'integer' },
      children: { type: 'array', items: { $ref: 'CategoryTreeNode#' } },
    },
  }),
);
export const TreeResponse = Type.Object({ data: Type.Array(Type.Unsafe<TreeNode>({ $ref: 'CategoryTreeNode#' })) });
export const TreeQuery = Type.Object({ locale: Type.Optional(Locale) });

/** Every category of the site (or of one locale) as a tree, with counts: two queries. */
export async function categoryTree(db: Executor, siteId: string, locale?: string): Promise<TreeNode[]> {
  const rows = await repo.treeRows(db, siteId, locale);
  const counts = await contentCountsByCategory(
    db,
    siteId,
    rows.map((r) => Number(r.id)),
  );
  const nodes = new Map<number, TreeNode>(
    rows.map((r) => [Number(r.id), { id: Number(r.id), name: r.name, slug: r.slug, contentCount: counts.get(Number(r.id)) ?? 0, children: [] }]),
  );
  const roots: TreeNode[] = [];
  for (const r of rows) {
    const node = nodes.get(Number(r.id))!;
    const parent = r.parent_id === null ? undefined : nodes.get(Number(r.parent_id));
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}
