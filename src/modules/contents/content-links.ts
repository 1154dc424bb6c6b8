import { sql } from 'kysely';
import type { AuthContext } from '../../plugins/auth.js';
import type { Executor } from '../../db/types.js';
import { paginate } from '../../shared/pagination.js';
import { applyVisibility, type Visibility } from './contents.repository.js';

/**
 * The one-way read API of contents for the groups contents link to (categories, tags): counts
 * and pages of linked contents. Those groups import this file, never the contents service, so
 * the module graph stays acyclic (contents -> categories/tags -> content-links).
 */

/** What this token may see of contents (decisions G12, G13): its own only with a `.own` scope, published only with a delivery token. */
export function visibilityOf(auth: Pick<AuthContext, 'userId' | 'access' | 'kind'>): Visibility {
  return { all: false, ownerId: auth.access === 'own' ? auth.userId : undefined, publishedOnly: auth.kind === 'delivery' };
}

async function countByRef(db: Executor, table: 'content_categories' | 'content_tags', siteId: string, ids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>(ids.map((id) => [id, 0]));
  if (!ids.length) return out;
  const col = table === 'content_categories' ? 'category_id' : 'tag_id';
  const { rows } = await sql<{ ref: number; n: number }>`
    select ${sql.ref(col)} as ref, count(*) as n from ${sql.table(table)}
    where site_id = ${siteId} and ${sql.ref(col)} in (${sql.join(ids)}) group by ${sql.ref(col)}`.execute(db);
  for (const r of rows) out.set(Number(r.ref), Number(r.n));
  return out;
}

/** Linked contents per category id (one grouped count for the page of categories). */
export function contentCountsByCategory(db: Executor, siteId: string, ids: number[]) {
  return countByRef(db, 'content_categories', siteId, ids);
}

/** Linked contents per tag id. */
export function contentCountsByTag(db: Executor, siteId: string, ids: number[]) {
  return countByRef(db, 'content_tags', siteId, ids);
}

/** The `computed` of a group contents link to (categories, tags): each row's contentCount, one grouped count for the page. */
export function linkedContentCounts(table: 'content_categories' | 'content_tags') {
  return async (db: Executor, siteId: string, rows: Array<Record<string, unknown>>) => {
    const counts = await countByRef(
      db,
      table,
      siteId,
      rows.map((r) => Number(r.id)),
    );
    return rows.map((r) => ({ contentCount: counts.get(Number(r.id)) ?? 0 }));
  };
}

/** A page of a category's contents the token may see, newest first. */
export function contentsOfCategory(db: Executor, siteId: string, categoryId: number, page: { page: number; limit: number }, visibility: Visibility) {
  const base = applyVisibility(
    db
      .selectFrom('contents')
      .innerJoin('content_categories as cc', 'cc.content_id', 'contents.id')
      .select(['contents.id', 'contents.title', 'contents.slug', 'contents.status'])
      .where('cc.site_id', '=', siteId)
      .where('cc.category_id', '=', categoryId),
    visibility,
  );
  return paginate(base, page, (qb) => qb.orderBy('contents.created_at', 'desc').orderBy('contents.id', 'desc'));
}
