import type { AutoId, Executor, Timestamp } from '../../db/types.js';

export interface TagsTable {
  id: AutoId;
  site_id: string;
  name: string;
  slug: string;
  description: string | null;
  locale: string;
  translation_group: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    tags: TagsTable;
  }
}

/** For each tag, its translation in `locale`, in the order given (those without one are left out); one query. */
export async function translatedTagIds(db: Executor, siteId: string, ids: number[], locale: string): Promise<number[]> {
  if (!ids.length) return [];
  const rows = await db
    .selectFrom('tags as source')
    .innerJoin('tags as t', (join) => join.onRef('t.site_id', '=', 'source.site_id').onRef('t.translation_group', '=', 'source.translation_group'))
    .select(['source.id as sourceId', 't.id as id'])
    .where('source.site_id', '=', siteId)
    .where('source.id', 'in', ids)
    .where('t.locale', '=', locale)
    .execute();
  const bySource = new Map(rows.map((r) => [Number(r.sourceId), Number(r.id)]));
  return ids.flatMap((id) => (bySource.has(id) ? [bySource.get(id)!] : []));
}
