import type { Kysely } from 'kysely';
import { parseJson, toJson } from '../db/json.js';
import { prepared } from '../db/prepared.js';
import type { Executor } from '../db/types.js';
import { paginate } from '../shared/pagination.js';

/**
 * The one revisions engine (contents and site blocks): each revision row holds who, when, the
 * action, what changed and a full snapshot of the record after the change, in a table of its
 * owner's (`<owner>_revisions`, cascading with it). The owner decides what a snapshot holds and
 * how changes are described; storing, listing (newest first, with the author's name), finding
 * and restoring order are the same for every owner.
 */
export interface RevisionRow {
  id: number;
  ownerId: number;
  action: string;
  changes: unknown[];
  author: { id: string; fullName: string } | null;
  createdAt: string;
}

export interface RevisionWithSnapshot extends RevisionRow {
  /** The snapshot as stored (JSON text or, on PostgreSQL, the parsed object). */
  snapshot: unknown;
}

/** One field that changed, as site-block revisions list it. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const same = (a: unknown, b: unknown) => a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/**
 * What changed between two JSON objects, as dotted paths into nested objects (`hero.title`);
 * arrays and scalar values are compared whole. An absent key reads as null. Keys are visited in
 * sorted order, so the list is the same whatever order the database keeps keys in (jsonb sorts them).
 */
export function fieldChanges(before: Record<string, unknown>, after: Record<string, unknown>, prefix = ''): FieldChange[] {
  const out: FieldChange[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const key of keys) {
    const [from, to] = [before[key] ?? null, after[key] ?? null];
    if (isPlainObject(from) && isPlainObject(to)) out.push(...fieldChanges(from, to, `${prefix}${key}.`));
    else if (!same(from, to)) out.push({ field: `${prefix}${key}`, from, to });
  }
  return out;
}

/** The revisions of one owner table: `revisionStore('site_block_revisions', 'site_block_id')`. */
export function revisionStore(table: string, ownerColumn: string) {
  const kdb = (db: Executor) => db as unknown as Kysely<any>;
  const columns = ['r.id', `r.${ownerColumn} as owner_id`, 'r.action', 'r.changes', 'r.author_id', 'u.full_name', 'r.created_at'];
  const toRow = (r: Record<string, any>): RevisionRow => ({
    id: Number(r.id),
    ownerId: Number(r.owner_id),
    action: r.action,
    changes: parseJson<unknown[]>(r.changes, []),
    author: r.author_id ? { id: r.author_id, fullName: r.full_name ?? '' } : null,
    createdAt: r.created_at,
  });
  // Prepared once (db/prepared.ts): every write of an owner records one, so the insert is not built and compiled each time.
  const insert = prepared(
    (db, p: { site_id: string; owner_id: number; author_id: string | null; action: string; changes: string; snapshot: string; created_at: string }) =>
      kdb(db)
        .insertInto(table)
        .values({
          site_id: p.site_id,
          [ownerColumn]: p.owner_id,
          author_id: p.author_id,
          action: p.action,
          changes: p.changes,
          snapshot: p.snapshot,
          created_at: p.created_at,
        })
        .returning('id'),
  );
  const base = (db: Executor, siteId: string, ownerId: number) =>
    kdb(db).selectFrom(`${table} as r`).leftJoin('users as u', 'u.id', 'r.author_id').where('r.site_id', '=', siteId).where(`r.${ownerColumn}`, '=', ownerId);

  return {
    /** Writes one revision; `snapshot` is JSON text (owners may splice pre-serialized parts in). */
    async record(
      tx: Executor,
      r: { siteId: string; ownerId: number; authorId: string | null; action: string; changes: readonly unknown[]; snapshot: string; at: string },
    ): Promise<number> {
      const row = await insert.executeTakeFirst(tx, {
        site_id: r.siteId,
        owner_id: r.ownerId,
        author_id: r.authorId,
        action: r.action,
        changes: toJson(r.changes),
        snapshot: r.snapshot,
        created_at: r.at,
      });
      return Number((row as { id: number }).id);
    },

    /** A page of an owner's revisions, newest first, without snapshots. */
    async list(db: Executor, siteId: string, ownerId: number, page: { page: number; limit: number }) {
      const { rows, total } = await paginate(base(db, siteId, ownerId).select(columns), page, (qb) => qb.orderBy('r.id', 'desc'));
      return { rows: (rows as Record<string, any>[]).map(toRow), total };
    },

    /** One revision of the owner, with its snapshot; undefined when it is not the owner's. */
    async find(db: Executor, siteId: string, ownerId: number, revisionId: number): Promise<RevisionWithSnapshot | undefined> {
      const r = await base(db, siteId, ownerId)
        .select([...columns, 'r.snapshot'])
        .where('r.id', '=', revisionId)
        .executeTakeFirst();
      return r ? { ...toRow(r), snapshot: r.snapshot } : undefined;
    },
  };
}
