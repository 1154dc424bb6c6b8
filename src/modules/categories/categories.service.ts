import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/types.js';
import type { DialectName } from '../../db/connect.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { invalid, issuesError, notFound } from '../../shared/errors.js';
import { findFreeSlug, slugify, slugsInLocale, slugTakenInLocale } from '../../shared/slug.js';
import { pageMeta } from '../../shared/pagination.js';
import { effectiveSchema, type FieldDefinition, fieldSchemaFromInput } from '../../shared/field-schema/index.js';
import { getSiteLocales, resolveLocale } from '../sites/sites.service.js';
import { assertLocaleFree, copyTargetLocale, groupMembers, newTranslationGroup, translationStatus } from '../../shared/translations/index.js';
import * as repo from './categories.repository.js';
import { contentCountsByCategory, contentsOfCategory } from '../contents/contents.service.js';
import type { Category, CategoryCreate, CategoryListQuery, CategoryUpdate, TreeNode } from './categories.schemas.js';

type CategoryRow = repo.CategoryRow;

function schemaOf(r: Pick<CategoryRow, 'schema'>): FieldDefinition[] | null {
  return parseJson<FieldDefinition[] | null>(r.schema, null);
}

type CategoryOut = Static<typeof Category>;

function toCategory(r: CategoryRow, contentCount: number): CategoryOut {
  return {
    id: Number(r.id),
    name: r.name,
    slug: r.slug,
    description: r.description,
    image: r.image,
    parentId: r.parent_id === null ? null : Number(r.parent_id),
    locale: r.locale,
    translationGroup: r.translation_group,
    contentCount,
    sitemapPriority: r.sitemap_priority === null ? null : Number(r.sitemap_priority),
    sitemapChangefreq: r.sitemap_changefreq as CategoryOut['sitemapChangefreq'],
    contentMode: r.content_mode,
    schema: schemaOf(r) as CategoryOut['schema'],
    schemaSource: r.schema_source,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

async function withCounts(db: Executor, siteId: string, rows: CategoryRow[]) {
  const counts = await contentCountsByCategory(
    db,
    siteId,
    rows.map((r) => Number(r.id)),
  );
  return rows.map((r) => toCategory(r, counts.get(Number(r.id)) ?? 0));
}

async function getRow(db: Executor, siteId: string, id: number): Promise<CategoryRow> {
  const row = await repo.findCategory(db, siteId, id);
  if (!row) throw notFound('category');
  return row;
}

/** `[...]` or `{ fields: [...] }` → validated, normalised definitions (422 SCHEMA_INVALID with paths). */
function parseSchemaInput(input: unknown): FieldDefinition[] | null {
  const parsed = fieldSchemaFromInput(input);
  if (!parsed.ok) throw issuesError('SCHEMA_INVALID', parsed.issues);
  return parsed.schema;
}

/**
 * A parent must be a category of the same site and locale, and never the category itself or one
 * of its descendants (422 PARENT_INVALID). Returns the parent's ancestor chain, nearest first,
 * starting with the parent itself.
 */
async function checkParent(db: Executor, siteId: string, parentId: number | null, locale: string, selfId?: number): Promise<CategoryRow[]> {
  if (parentId === null) return [];
  const chain = await repo.ancestors(db, siteId, parentId);
  if (!chain.length) throw invalid('PARENT_INVALID', 'parentId', 'The parent is not a category of this site.');
  if (chain[0]!.locale !== locale) throw invalid('PARENT_INVALID', 'parentId', 'The parent must be in the same locale.');
  if (selfId !== undefined && chain.some((c) => Number(c.id) === selfId)) {
    throw invalid('PARENT_INVALID', 'parentId', 'A category cannot be its own ancestor.');
  }
  return chain;
}

/** The schema contents are validated against: own, or the nearest ancestor's when inheriting. */
function resolveEffective(own: { schemaSource: 'own' | 'inherit'; schema: FieldDefinition[] | null }, chain: CategoryRow[]): FieldDefinition[] | null {
  return effectiveSchema([own, ...chain.map((c) => ({ schemaSource: c.schema_source, schema: schemaOf(c) }))]);
}

/** A structured category must end up with a schema to validate contents against. */
function checkStructured(mode: 'standard' | 'structured', source: 'own' | 'inherit', effective: FieldDefinition[] | null): void {
  if (mode !== 'structured' || effective) return;
  if (source === 'inherit') throw invalid('SCHEMA_INVALID', 'schemaSource', 'No ancestor has a schema to inherit.');
  throw invalid('SCHEMA_INVALID', 'schema', 'A structured category needs a field schema.');
}

export async function listCategories(db: Executor, dialect: DialectName, siteId: string, query: Static<typeof CategoryListQuery>) {
  const { rows, total } = await repo.listCategories(db, dialect, siteId, query);
  return { data: await withCounts(db, siteId, rows), meta: pageMeta(total, query.page, query.limit) };
}

export async function getCategory(db: Executor, siteId: string, id: number) {
  const [category] = await withCounts(db, siteId, [await getRow(db, siteId, id)]);
  return category!;
}

export async function getCategoryDetail(db: Executor, siteId: string, id: number, page: { page: number; limit: number }) {
  const row = await getRow(db, siteId, id);
  const chain = await repo.ancestors(db, siteId, row.parent_id);
  const [category] = await withCounts(db, siteId, [row]);
  const contents = await contentsOfCategory(db, siteId, id, page);
  const parent = chain[0];
  return {
    ...category!,
    parent: parent ? { id: Number(parent.id), name: parent.name, slug: parent.slug } : null,
    effectiveSchema: resolveEffective({ schemaSource: row.schema_source, schema: schemaOf(row) }, chain) as CategoryOut['schema'],
    contents: {
      data: contents.rows.map((c) => ({ id: Number(c.id), title: c.title, slug: c.slug, status: c.status })),
      meta: pageMeta(contents.total, page.page, page.limit),
    },
  };
}

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

export async function createCategory(db: Db, siteId: string, input: Static<typeof CategoryCreate>) {
  const locales = await getSiteLocales(db, siteId);
  const locale = resolveLocale(locales, input.locale);
  const schema = parseSchemaInput(input.schema);
  const mode = input.contentMode ?? 'standard';
  const source = input.schemaSource ?? 'own';
  return db.transaction().execute(async (tx) => {
    const chain = await checkParent(tx, siteId, input.parentId ?? null, locale);
    checkStructured(mode, source, resolveEffective({ schemaSource: source, schema }, chain));
    const name = input.name.trim();
    let slug = input.slug;
    if (slug) {
      if (await slugTakenInLocale(tx, 'categories', siteId, locale, slug)) throw invalid('SLUG_TAKEN', 'slug');
    } else {
      const base = slugify(name) || 'category';
      slug = await findFreeSlug(base, (c) => slugsInLocale(tx, 'categories', siteId, locale, c));
    }
    let group = input.translationGroup;
    if (group) await assertLocaleFree(tx, 'categories', siteId, group, locale);
    else group = newTranslationGroup();
    const at = now();
    const id = await repo.insertCategory(tx, {
      site_id: siteId,
      name,
      slug,
      description: input.description ?? null,
      image: input.image ?? null,
      parent_id: input.parentId ?? null,
      locale,
      translation_group: group,
      sitemap_priority: input.sitemapPriority ?? null,
      sitemap_changefreq: input.sitemapChangefreq ?? null,
      content_mode: mode,
      schema: schema ? toJson(schema) : null,
      schema_source: source,
      created_at: at,
      updated_at: at,
    });
    return getCategory(tx, siteId, id);
  });
}

export async function updateCategory(db: Db, siteId: string, id: number, input: Static<typeof CategoryUpdate>) {
  const schemaGiven = input.schema !== undefined;
  const schema = schemaGiven ? parseSchemaInput(input.schema) : undefined;
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    const parentId = input.parentId !== undefined ? input.parentId : row.parent_id === null ? null : Number(row.parent_id);
    const chain = await checkParent(tx, siteId, parentId, row.locale, id);
    const mode = input.contentMode ?? row.content_mode;
    const source = input.schemaSource ?? row.schema_source;
    checkStructured(mode, source, resolveEffective({ schemaSource: source, schema: schemaGiven ? schema! : schemaOf(row) }, chain));
    if (input.slug && input.slug !== row.slug && (await slugTakenInLocale(tx, 'categories', siteId, row.locale, input.slug, id)))
      throw invalid('SLUG_TAKEN', 'slug');
    await repo.updateCategory(tx, siteId, id, {
      name: input.name?.trim(),
      slug: input.slug,
      description: input.description,
      image: input.image,
      parent_id: input.parentId,
      sitemap_priority: input.sitemapPriority,
      sitemap_changefreq: input.sitemapChangefreq,
      content_mode: input.contentMode,
      schema: schemaGiven ? (schema ? toJson(schema) : null) : undefined,
      schema_source: input.schemaSource,
      updated_at: now(),
    });
    return getCategory(tx, siteId, id);
  });
}

/** Children move up to the deleted category's parent (or become roots); contents lose the link (spec "DELETE /categories/:id"). */
export async function deleteCategory(db: Db, siteId: string, id: number) {
  await db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    await repo.reparentChildren(tx, siteId, id, row.parent_id === null ? null : Number(row.parent_id));
    await repo.deleteCategory(tx, siteId, id);
  });
}

export async function categoryTranslations(db: Executor, siteId: string, id: number) {
  const row = await getRow(db, siteId, id);
  const { enabledLocales } = await getSiteLocales(db, siteId);
  const members = await groupMembers<CategoryRow>(db, 'categories', siteId, row.translation_group);
  const fields = (r: CategoryRow) => ({ name: r.name, description: r.description, image: r.image });
  return translationStatus(
    { locale: row.locale, fields: fields(row) },
    members.map((m) => ({ locale: m.locale, fields: fields(m) })),
    enabledLocales,
  );
}

/**
 * A copy in the target locale, in the same translation group. Its parent is the parent's
 * translation in that locale when there is one, else it becomes a root.
 */
export async function copyCategoryToLocale(db: Db, siteId: string, id: number, body: { targetLocale?: string; locale?: string }) {
  const locales = await getSiteLocales(db, siteId);
  const target = copyTargetLocale(locales, body);
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    await assertLocaleFree(tx, 'categories', siteId, row.translation_group, target);
    let parentId: number | null = null;
    if (row.parent_id !== null) {
      const parent = await repo.findCategory(tx, siteId, Number(row.parent_id));
      const translated = parent ? await repo.findInGroup(tx, siteId, parent.translation_group, target) : undefined;
      parentId = translated ? Number(translated.id) : null;
    }
    const slug = await findFreeSlug(row.slug, (c) => slugsInLocale(tx, 'categories', siteId, target, c));
    const at = now();
    const newId = await repo.insertCategory(tx, {
      site_id: siteId,
      name: row.name,
      slug,
      description: row.description,
      image: row.image,
      parent_id: parentId,
      locale: target,
      translation_group: row.translation_group,
      sitemap_priority: row.sitemap_priority,
      sitemap_changefreq: row.sitemap_changefreq,
      content_mode: row.content_mode,
      schema: row.schema === null ? null : toJson(schemaOf(row)),
      schema_source: row.schema_source,
      created_at: at,
      updated_at: at,
    });
    return getCategory(tx, siteId, newId);
  });
}

/** The schema contents of a category are validated against (own or inherited), or null. */
export async function effectiveSchemaOf(db: Executor, siteId: string, id: number): Promise<FieldDefinition[] | null> {
  const row = await repo.findCategory(db, siteId, id);
  if (row?.content_mode !== 'structured') return null;
  const chain = await repo.ancestors(db, siteId, row.parent_id);
  return resolveEffective({ schemaSource: row.schema_source, schema: schemaOf(row) }, chain);
}

/** For each category, its translation in `locale` (those without one are left out). */
export async function translatedCategoryIds(db: Executor, siteId: string, ids: number[], locale: string): Promise<number[]> {
  const rows = await repo.findCategories(db, siteId, ids);
  const out: number[] = [];
  for (const r of rows) {
    const t = await repo.findInGroup(db, siteId, r.translation_group, locale);
    if (t) out.push(Number(t.id));
  }
  return out;
}
