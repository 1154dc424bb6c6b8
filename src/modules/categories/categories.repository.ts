import { sql, type Selectable } from 'kysely';
import type { AutoId, Executor, Json, Timestamp } from '../../db/types.js';

export interface CategoriesTable {
  id: AutoId;
  site_id: string;
  name: string;
  slug: string;
  description: string | null;
  image: string | null;
  parent_id: number | null;
  locale: string;
  translation_group: string;
  sitemap_priority: number | null;
  sitemap_changefreq: string | null;
  content_mode: 'standard' | 'structured';
  schema: Json<unknown[]> | null;
  schema_source: 'own' | 'inherit';
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    categories: CategoriesTable;
  }
}

export type CategoryRow = Selectable<CategoriesTable>;

/** Every descendant of a category, at any depth (one recursive query). */
export async function descendantIds(db: Executor, siteId: string, id: number): Promise<number[]> {
  const rows = await db
    .withRecursive('sub(id)', (qc) =>
      qc
        .selectFrom('categories')
        .select('id')
        .where('site_id', '=', siteId)
        .where('parent_id', '=', id)
        .unionAll(qc.selectFrom('categories as c').innerJoin('sub', 'sub.id', 'c.parent_id').select('c.id').where('c.site_id', '=', siteId)),
    )
    .selectFrom('sub')
    .select('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

/** The ancestors of a category, nearest first (one recursive query; stops at 100 levels, so a corrupt cycle cannot loop). */
export async function ancestors(db: Executor, siteId: string, parentId: number | null): Promise<CategoryRow[]> {
  if (parentId === null) return [];
  const rows = await db
    .withRecursive('chain(id, parent_id, depth)', (qc) =>
      qc
        .selectFrom('categories')
        .select(['id', 'parent_id', sql<number>`0`.as('depth')])
        .where('site_id', '=', siteId)
        .where('id', '=', parentId)
        .unionAll(
          qc
            .selectFrom('categories as c')
            .innerJoin('chain', 'chain.parent_id', 'c.id')
            .select(['c.id', 'c.parent_id', sql<number>`chain.depth + 1`.as('depth')])
            .where('c.site_id', '=', siteId)
            .where('chain.depth', '<', 100),
        ),
    )
    .selectFrom('chain')
    .innerJoin('categories', 'categories.id', 'chain.id')
    .selectAll('categories')
    .orderBy('chain.depth', 'asc')
    .execute();
  return rows as CategoryRow[];
}

export function treeRows(db: Executor, siteId: string, locale?: string) {
  let q = db.selectFrom('categories').select(['id', 'name', 'slug', 'parent_id', 'locale']).where('site_id', '=', siteId);
  if (locale) q = q.where('locale', '=', locale);
  return q.orderBy('name', 'asc').orderBy('id', 'asc').execute();
}

export function findInGroup(db: Executor, siteId: string, group: string, locale: string) {
  return db
    .selectFrom('categories')
    .select(['id'])
    .where('site_id', '=', siteId)
    .where('translation_group', '=', group)
    .where('locale', '=', locale)
    .executeTakeFirst();
}

export function reparentChildren(db: Executor, siteId: string, id: number, newParent: number | null) {
  return db.updateTable('categories').set({ parent_id: newParent }).where('site_id', '=', siteId).where('parent_id', '=', id).execute();
}
