import type { ColumnType, Insertable, Selectable, SelectQueryBuilder, Updateable } from 'kysely';
import type { AutoId, DB, Executor, Json, Timestamp } from '../../db/types.js';
import { dateBound } from '../../shared/pagination.js';
import { dialectOf } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import { filterOnly, fixedLimit } from '../../db/planner.js';
import { applyRecordFilters } from '../../shared/list-filters.js';
import { revisionStore } from '../../kit/revisions.js';
import type { ContentListQueryValue } from './contents.schemas.js';

export interface ContentsTable {
  id: AutoId;
  site_id: string;
  type: string;
  title: string;
  slug: string;
  status: 'draft' | 'scheduled' | 'published' | 'archived';
  excerpt: string | null;
  locale: string;
  translation_group: string;
  author_id: string | null;
  featured_image_url: string | null;
  featured_image_alt: string | null;
  meta_title: string | null;
  meta_description: string | null;
  meta_keywords: string | null;
  canonical_url: string | null;
  og_image: string | null;
  metadata: Json<Record<string, unknown>> | null;
  custom_data: Json<Record<string, unknown>> | null;
  structured_data: Json<Record<string, unknown>> | null;
  scheduled_at: Timestamp | null;
  published_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /**
   * Its categories and its tags as it shows them, in link order: kept by triggers from the link
   * tables and the names and slugs of categories and tags (migration 0048, decisions PF11), never
   * written by the service.
   */
  categories_list: LinkList;
  tags_list: LinkList;
}

/** A category or tag as a content shows it. */
export type Linked = { id: number; name: string; slug: string };
/** A kept list of links (JSON text on SQLite, jsonb on PostgreSQL): read only. */
type LinkList = ColumnType<Linked[] | string, never, never>;

/**
 * A content's body (migration 0025, issue 15 item 5): out of the contents row, so the summary
 * columns and dates of a list or ranking read sit in a small row. Written with its content, gone
 * with it (cascade).
 */
export interface ContentBodiesTable {
  content_id: number;
  site_id: string;
  /** ProseMirror JSON, and what is rendered from it on write (decisions C1). */
  body: Json<Record<string, unknown>> | null;
  body_html: string;
  /** The search text (decisions H19): indexed, never answered. */
  body_text: string;
}
/** The body columns a write gives (the table's own keys come from the content). */
export type BodyColumns = Omit<Insertable<ContentBodiesTable>, 'content_id' | 'site_id'>;

/** Contents per site and status, kept by triggers (migration 0012). */
export interface ContentCountsTable {
  site_id: string;
  status: string;
  n: number;
}
export interface ContentCategoriesTable {
  site_id: string;
  content_id: number;
  category_id: number;
  position: number;
}
export interface ContentTagsTable {
  site_id: string;
  content_id: number;
  tag_id: number;
  position: number;
}
export interface ContentRevisionsTable {
  id: AutoId;
  site_id: string;
  content_id: number;
  author_id: string | null;
  action: string;
  changes: Json<string[]>;
  snapshot: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    contents: ContentsTable;
    content_bodies: ContentBodiesTable;
    content_categories: ContentCategoriesTable;
    content_counts: ContentCountsTable;
    content_tags: ContentTagsTable;
    content_revisions: ContentRevisionsTable;
  }
}

/** A contents row as stored (its body apart, in content_bodies). */
export type ContentRecord = Selectable<ContentsTable>;
/**
 * A content as reads answer it: the row with its body and HTML and its author's name (one join
 * each, not a query per page), without `body_text`, the search text (up to 100,000 characters)
 * that no answer shows.
 */
export type ContentRow = ContentRecord & Pick<Selectable<ContentBodiesTable>, 'body' | 'body_html'> & { author_name: string | null };

/**
 * Which contents a read or write sees (decisions G12, G13): a token's view (`visibilityOf(auth)`:
 * a `.own` scope limits to the token user's, a delivery token to published ones), or the explicit
 * `ALL_CONTENTS` (the service's own reads, the scheduler). Every repository function that reads or
 * changes contents takes one, so none sees everything by omission.
 */
export type Visibility = { readonly all: true } | { readonly all: false; readonly ownerId: string | undefined; readonly publishedOnly: boolean };
export const ALL_CONTENTS: Visibility = Object.freeze({ all: true });

/** The prepared statements' visibility arguments (structural: publishedOnly; bound: ownerId). */
type VisibilityParams = { ownerId?: string; publishedOnly?: true };
const paramsOf = (v: Visibility): VisibilityParams => (v.all ? {} : { ownerId: v.ownerId, publishedOnly: v.publishedOnly || undefined });

/** The columns a list or search row needs but its kept lists (summaryColumns): never the body (spec "Content (summary)"). */
const SUMMARY_SCALARS = [
  'contents.id',
  'contents.title',
  'contents.slug',
  'contents.type',
  'contents.status',
  'contents.excerpt',
  'contents.locale',
  'contents.translation_group',
  'contents.author_id',
  'contents.featured_image_url',
  'contents.featured_image_alt',
  'contents.published_at',
  'contents.scheduled_at',
  'contents.created_at',
  'contents.updated_at',
] as const;
const LIST_COLUMNS = ['contents.categories_list', 'contents.tags_list'] as const;

/**
 * What a read selects of the kept lists (migration 0048): their JSON text on both databases, as
 * the answers write it (decisions PF13); PostgreSQL's jsonb would arrive parsed, only to be
 * written out again.
 */
function linkLists(db: Executor) {
  const d = dialectOf(db);
  return [d.jsonText('contents.categories_list').as('categories_list'), d.jsonText('contents.tags_list').as('tags_list')];
}

/** The summary columns of a read, its kept lists as text. */
function summaryColumns<O>(db: Executor, qb: SelectQueryBuilder<DB, 'contents', O>) {
  return qb.select(SUMMARY_SCALARS).select(linkLists(db));
}
export type SummaryRow = Pick<
  ContentRow,
  | 'id'
  | 'title'
  | 'slug'
  | 'type'
  | 'status'
  | 'excerpt'
  | 'locale'
  | 'translation_group'
  | 'author_id'
  | 'featured_image_url'
  | 'featured_image_alt'
  | 'published_at'
  | 'scheduled_at'
  | 'created_at'
  | 'updated_at'
  | 'categories_list'
  | 'tags_list'
  | 'author_name'
>;

/** Every column of the table but database-maintained ones (the PostgreSQL search vector is large). */
const ROW_SCALARS = [
  ...SUMMARY_SCALARS,
  'contents.site_id',
  'contents.meta_title',
  'contents.meta_description',
  'contents.meta_keywords',
  'contents.canonical_url',
  'contents.og_image',
  'contents.metadata',
  'contents.custom_data',
  'contents.structured_data',
] as const;
/** The row and its HTML (never the search text): what a detail answers, with its body and kept lists as text (detailRow). */
const DETAIL_COLUMNS = [...ROW_SCALARS, 'cb.body_html'] as const;
const RETURNED_COLUMNS = [...ROW_SCALARS, ...LIST_COLUMNS].map((c) => c.slice('contents.'.length)) as Array<keyof ContentsTable>;

type ContentsQuery = SelectQueryBuilder<DB, 'contents', any>;

/** The author's name beside the row; the user must be of the content's site. */
function withAuthor<O>(qb: SelectQueryBuilder<DB, 'contents', O>) {
  return qb
    .leftJoin('users as author', (join) => join.onRef('author.id', '=', 'contents.author_id').onRef('author.site_id', '=', 'contents.site_id'))
    .select('author.full_name as author_name');
}

/** The content's body beside the row (`cb`), of the same site. */
function withBody<O>(qb: SelectQueryBuilder<DB, 'contents', O>) {
  return qb.leftJoin('content_bodies as cb', (join) => join.onRef('cb.content_id', '=', 'contents.id').onRef('cb.site_id', '=', 'contents.site_id'));
}

/**
 * The detail columns: the row, its body, its author's name. The body and the kept lists come as
 * their JSON text on both databases: the answers write them as they are (decisions N11, PF5, PF13).
 */
function detailRow(db: Executor) {
  const body = dialectOf(db).jsonText('cb.body').as('body');
  return withAuthor(
    withBody(db.selectFrom('contents')).select(DETAIL_COLUMNS).select(linkLists(db)).select(body) as unknown as SelectQueryBuilder<DB, 'contents', object>,
  );
}

export function applyVisibility<Q extends ContentsQuery>(qb: Q, v: Visibility): Q {
  return applyVisibilityParams(qb, paramsOf(v));
}

function applyVisibilityParams<Q extends ContentsQuery>(qb: Q, v: VisibilityParams): Q {
  let q = qb as ContentsQuery;
  if (v.ownerId) q = q.where('contents.author_id', '=', v.ownerId);
  if (v.publishedOnly) q = q.where('contents.status', '=', 'published');
  return q as Q;
}

/** Every list filter of the spec's contents list (named per decisions G6-G7), as WHERE clauses on `contents`. */
export function applyContentFilters<Q extends ContentsQuery>(qb: Q, f: Partial<ContentListQueryValue>): Q {
  let q = applyRecordFilters(qb as ContentsQuery, f, 'contents');
  if (f.type) q = q.where('contents.type', '=', f.type);
  if (f.status) q = q.where('contents.status', '=', f.status);
  if (f.authorId) q = q.where('contents.author_id', '=', f.authorId);
  if (f.publishedFrom) q = q.where('contents.published_at', '>=', dateBound(f.publishedFrom, false));
  if (f.publishedTo) q = q.where('contents.published_at', '<=', dateBound(f.publishedTo, true));
  if (f.hasFeaturedImage !== undefined) q = q.where('contents.featured_image_url', f.hasFeaturedImage ? 'is not' : 'is', null);
  if (f.categoryIds?.length) {
    const ids = f.categoryIds;
    q = q.where((eb) =>
      eb.exists(
        eb.selectFrom('content_categories as cc').select('cc.content_id').whereRef('cc.content_id', '=', 'contents.id').where('cc.category_id', 'in', ids),
      ),
    );
  }
  if (f.tagIds?.length) {
    const ids = f.tagIds;
    q = q.where((eb) =>
      eb.exists(eb.selectFrom('content_tags as ct').select('ct.content_id').whereRef('ct.content_id', '=', 'contents.id').where('ct.tag_id', 'in', ids)),
    );
  }
  if (f.uncategorized !== undefined) {
    q = q.where((eb) => {
      const linked = eb.exists(eb.selectFrom('content_categories as cc').select('cc.content_id').whereRef('cc.content_id', '=', 'contents.id'));
      return f.uncategorized ? eb.not(linked) : linked;
    });
  }
  if (f.untagged !== undefined) {
    q = q.where((eb) => {
      const linked = eb.exists(eb.selectFrom('content_tags as ct').select('ct.content_id').whereRef('ct.content_id', '=', 'contents.id'));
      return f.untagged ? eb.not(linked) : linked;
    });
  }
  if (f.contentMode) {
    q = q.where((eb) => {
      const structured = eb.exists(
        eb
          .selectFrom('content_categories as cc')
          .innerJoin('categories as cat', 'cat.id', 'cc.category_id')
          .select('cc.content_id')
          .whereRef('cc.content_id', '=', 'contents.id')
          .where('cat.content_mode', '=', 'structured'),
      );
      return f.contentMode === 'structured' ? structured : eb.not(structured);
    });
  }
  return q as Q;
}

/** The list filters as prepared-query arguments: dates bound here, so the builder never transforms a value. */
export type ListArgs = Partial<ContentListQueryValue> & {
  siteId: string;
  ownerId?: string;
  publishedOnly?: true;
  limit?: number;
  offset?: number;
  /** Keyset paging (decisions MP1): the page starts after the row with this sort value and id. */
  afterValue?: string;
  afterId?: number;
};
/** Where a cursor page starts: after this sort value and id, in the list's own order. */
export interface ListAfter {
  value: string;
  id: number;
}
/** The list arguments the builders branch on (db/prepared.ts): part of the statement's shape, never bound. */
export const LIST_STRUCTURAL = ['sortBy', 'sortOrder', 'hasFeaturedImage', 'uncategorized', 'untagged', 'contentMode', 'publishedOnly'] as const;

/** A list or search query's filters and visibility as arguments for `applyListFilters`. */
export function listFilterArgs(siteId: string, filters: Omit<Partial<ContentListQueryValue>, 'page' | 'limit'>, v: Visibility): ListArgs {
  return {
    ...filters,
    siteId,
    ...paramsOf(v),
    dateFrom: filters.dateFrom && dateBound(filters.dateFrom, false),
    dateTo: filters.dateTo && dateBound(filters.dateTo, true),
    publishedFrom: filters.publishedFrom && dateBound(filters.publishedFrom, false),
    publishedTo: filters.publishedTo && dateBound(filters.publishedTo, true),
  };
}

/** Visibility and every list filter, on a query over `contents` that already has its site condition. */
export function applyListFilters<Q extends ContentsQuery>(qb: Q, p: ListArgs): Q {
  return applyContentFilters(applyVisibilityParams(qb, p), p);
}

function listBase(db: Executor, p: ListArgs) {
  return applyListFilters(db.selectFrom('contents').where('contents.site_id', '=', p.siteId), p);
}

/** The filtered list's count: its own statement, or a column of the page (PF14). */
function filteredCountQuery(db: Executor, p: ListArgs) {
  return listBase(db, p).select((eb) => eb.fn.countAll<number>().as('count'));
}
const listCount = prepared(filteredCountQuery, { structural: LIST_STRUCTURAL });

/** The total from the per-status counters (decisions N12): for lists filtered by nothing but the status. */
function countedTotalQuery(db: Executor, p: { siteId: string; status?: string }) {
  const q = db
    .selectFrom('content_counts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('n'), eb.lit(0)).as('count'))
    .where('site_id', '=', p.siteId);
  return p.status ? q.where('status', '=', p.status) : q;
}
const countedTotal = prepared(countedTotalQuery);

/** How a page counts its list in the same statement (PF14): from the counters (with a status or not), or by its filters. */
type PageTotal = { total?: 'counted' | 'filtered'; countedStatus?: string };

/**
 * A page of summaries. The page's ids come from the filtered, ordered index first; only those 15
 * rows are then read with their author. Joined before the OFFSET, every skipped row would be read
 * and joined (page 300 of 10,000: 1.8 ms instead of 0.25). With `total`, each row also carries the
 * list's total, counted once by an uncorrelated subquery (decisions PF14).
 */
const listPage = prepared(
  (db, p: ListArgs & PageTotal) => {
    const column = `contents.${p.sortBy ?? 'created_at'}` as 'contents.created_at';
    const order = p.sortOrder ?? (p.sortBy ? 'asc' : 'desc');
    let ids = listBase(db, p);
    // The rows after the cursor's in the sort order: one range on the sort index, however deep.
    if (p.afterId !== undefined)
      ids = ids.where((eb) => eb(eb.refTuple(column, 'contents.id'), order === 'desc' ? '<' : '>', eb.tuple(p.afterValue!, p.afterId!)));
    // The page size in the statement and no OFFSET on a first or cursor page: PostgreSQL then
    // keeps one plan for the statement instead of planning each run (decisions PF23).
    const pageIds = ids
      .select('contents.id')
      .orderBy(column, order)
      .orderBy('contents.id', order)
      .limit(fixedLimit(p.limit!))
      .$if(p.offset !== undefined, (q) => q.offset(p.offset!));
    return withAuthor(summaryColumns(db, db.selectFrom('contents')))
      .$if(p.total === 'counted', (q) => q.select(() => countedTotalQuery(db, { siteId: p.siteId, status: p.countedStatus }).as('total')))
      .$if(p.total === 'filtered', (q) => q.select(() => filteredCountQuery(db, p).as('total')))
      .where(filterOnly('contents.site_id'), '=', p.siteId)
      .where('contents.id', 'in', pageIds)
      .orderBy(column, order)
      .orderBy('contents.id', order);
  },
  { structural: [...LIST_STRUCTURAL, 'total', 'limit'] },
);

const LIST_PAGING = new Set(['page', 'limit', 'sortBy', 'sortOrder', 'cursor']);

/** Whether the list has no filter the counters cannot answer: only paging, sorting and a status (or a delivery token's `published`). */
function countable(query: ContentListQueryValue, visibility: Visibility): { status?: string } | null {
  const v = paramsOf(visibility);
  if (v.ownerId) return null;
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && !LIST_PAGING.has(name) && name !== 'status') return null;
  }
  if (v.publishedOnly && query.status && query.status !== 'published') return null;
  return { status: v.publishedOnly ? 'published' : query.status };
}

/**
 * A page of summaries and the total (decisions G5); `withTotal: false` skips the count (a caller
 * that shows no pages). One statement when the page has rows (PF14); a page past the end, or of
 * an empty list, counts on its own.
 */
export async function listContents(db: Executor, siteId: string, query: ContentListQueryValue, v: Visibility, withTotal = true, after?: ListAfter) {
  const { page, limit, cursor: _cursor, ...filters } = query;
  const args = listFilterArgs(siteId, filters, v);
  const paging = after ? { limit, afterValue: after.value, afterId: after.id } : { limit, offset: page > 1 ? (page - 1) * limit : undefined };
  if (!withTotal) return { rows: (await listPage.execute(db, { ...args, ...paging })) as SummaryRow[], total: -1 };
  const counted = countable(query, v);
  const total: PageTotal = counted ? { total: 'counted', countedStatus: counted.status } : { total: 'filtered' };
  const rows = (await listPage.execute(db, { ...args, ...paging, ...total })) as Array<SummaryRow & { total: number | string }>;
  if (rows.length) return { rows, total: Number(rows[0]!.total) };
  const count = await (counted ? countedTotal.executeTakeFirst(db, { siteId, ...counted }) : listCount.executeTakeFirst(db, args));
  return { rows: [] as SummaryRow[], total: Number(count?.count ?? 0) };
}

const summariesQuery = prepared((db, p: { siteId: string; ids: number[] }) =>
  withAuthor(summaryColumns(db, db.selectFrom('contents')))
    .where(filterOnly('contents.site_id'), '=', p.siteId)
    .where('contents.id', 'in', p.ids),
);

export function summariesByIds(db: Executor, siteId: string, ids: number[]): Promise<SummaryRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return summariesQuery.execute(db, { siteId, ids }) as Promise<SummaryRow[]>;
}

const VISIBILITY_STRUCTURAL = ['publishedOnly'] as const;
type VisibilityArgs = { siteId: string; ownerId?: string; publishedOnly?: true };
const visibilityArgs = (siteId: string, v: Visibility): VisibilityArgs => ({ siteId, ...paramsOf(v) });

/** A detail's translations, as a JSON array read with parseJson (DetailRow). */
export interface DetailLists {
  alternates_list: unknown;
}
export type DetailRow = ContentRow & DetailLists;

/**
 * A detail row with its alternates in the same statement (issue 15 item 2): the other members of
 * its translation group that the reader may see (as applyVisibility). Its categories and tags are
 * on the row (migration 0048). Read by id, one statement instead of four.
 */
function detailQuery(db: Executor, p: VisibilityArgs) {
  const d = dialectOf(db);
  return detailRow(db).select((eb) => [
    // Sorted by locale by the reader (see groupMembers: no ORDER BY on locale in SQL).
    d
      .jsonArrayFrom(
        eb
          .selectFrom('contents as m')
          .select(['m.id', 'm.locale', 'm.slug'])
          .whereRef('m.site_id', '=', 'contents.site_id')
          .whereRef('m.translation_group', '=', 'contents.translation_group')
          .whereRef('m.id', '!=', 'contents.id')
          .$if(p.ownerId !== undefined, (q) => q.where('m.author_id', '=', p.ownerId!))
          .$if(p.publishedOnly === true, (q) => q.where('m.status', '=', 'published')),
      )
      .as('alternates_list'),
  ]);
}

/** A content by id through `select` (its columns), as the reader may see it. */
const byId = (select: (db: Executor, p: VisibilityArgs) => ContentsQuery) =>
  prepared(
    (db, p: VisibilityArgs & { id: number }) =>
      applyVisibilityParams(select(db, p).where('contents.site_id', '=', p.siteId).where('contents.id', '=', p.id), p),
    { structural: VISIBILITY_STRUCTURAL },
  );

/** The row alone, for the writes that read it first. */
const contentById = byId(detailRow);
const contentDetailById = byId(detailQuery);

/** Without a locale, the site's default one, looked up in the same statement. */
const contentBySlug = prepared(
  (db, p: VisibilityArgs & { slug: string; locale?: string }) =>
    applyVisibilityParams(detailQuery(db, p).where('contents.site_id', '=', p.siteId).where('contents.slug', '=', p.slug), p).where(
      'contents.locale',
      '=',
      p.locale ?? ((eb) => eb.selectFrom('sites').select('sites.default_locale').where('sites.id', '=', p.siteId)),
    ),
  { structural: VISIBILITY_STRUCTURAL },
);

export function findContent(db: Executor, siteId: string, id: number, v: Visibility) {
  return contentById.executeTakeFirst(db, { ...visibilityArgs(siteId, v), id }) as Promise<ContentRow | undefined>;
}

/** A content with its alternates, in one statement (the detail reads). */
export function findContentDetail(db: Executor, siteId: string, id: number, v: Visibility) {
  return contentDetailById.executeTakeFirst(db, { ...visibilityArgs(siteId, v), id }) as Promise<DetailRow | undefined>;
}

export function findContentBySlug(db: Executor, siteId: string, slug: string, locale: string | undefined, v: Visibility) {
  return contentBySlug.executeTakeFirst(db, { ...visibilityArgs(siteId, v), slug, locale }) as Promise<DetailRow | undefined>;
}

export type ContentLinks = { categoryIds: number[]; tagIds: number[] };

/** The id, name and slug of those of `ids` that are the site's categories or tags (one query). */
export async function refsByIds(db: Executor, table: 'categories' | 'tags', siteId: string, ids: number[]): Promise<Map<number, Linked>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom(table).select(['id', 'name', 'slug']).where('site_id', '=', siteId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [Number(r.id), { id: Number(r.id), name: r.name, slug: r.slug }]));
}

/** A content's categories in their order; `fresh`: the content was inserted in this transaction (nothing to delete). */
export async function setCategories(db: Executor, siteId: string, contentId: number, ids: number[], fresh = false) {
  if (!fresh) await db.deleteFrom('content_categories').where('site_id', '=', siteId).where('content_id', '=', contentId).execute();
  if (ids.length)
    await db
      .insertInto('content_categories')
      .values(ids.map((id, i) => ({ site_id: siteId, content_id: contentId, category_id: id, position: i })))
      .execute();
}

/** A content's tags in their order; `fresh` as setCategories. */
export async function setTags(db: Executor, siteId: string, contentId: number, ids: number[], fresh = false) {
  if (!fresh) await db.deleteFrom('content_tags').where('site_id', '=', siteId).where('content_id', '=', contentId).execute();
  if (ids.length)
    await db
      .insertInto('content_tags')
      .values(ids.map((id, i) => ({ site_id: siteId, content_id: contentId, tag_id: id, position: i })))
      .execute();
}

/** The search text of a content (see ContentRow), for a copy that keeps it. */
export async function bodyText(db: Executor, siteId: string, id: number): Promise<string> {
  const row = await db.selectFrom('content_bodies').select('body_text').where('site_id', '=', siteId).where('content_id', '=', id).executeTakeFirst();
  return row?.body_text ?? '';
}

// Prepared once (db/prepared.ts, issue 15 item 4): a create is not built and compiled each time.
// `skipTakenSlug`: a slug the site already uses in the locale inserts nothing and answers no row
// (the unique index's own lookup, instead of a look-up statement before the insert); the author's
// name comes back with the id (the answer shows it) instead of from a statement of its own.
type RowArgs = Insertable<ContentsTable> & { skipTakenSlug: boolean };
const insertRow = prepared(
  (db, { skipTakenSlug, ...columns }: RowArgs) =>
    db
      .insertInto('contents')
      .values(columns)
      .$if(skipTakenSlug, (q) => q.onConflict((oc) => oc.columns(['site_id', 'locale', 'slug']).doNothing()))
      .returning((eb) => [
        'id',
        eb
          .selectFrom('users')
          .select('full_name')
          .whereRef('users.site_id', '=', 'contents.site_id')
          .whereRef('users.id', '=', 'contents.author_id')
          .as('author_name'),
      ]),
  { structural: ['skipTakenSlug'] },
);
const insertBody = prepared((db, p: Insertable<ContentBodiesTable>) => db.insertInto('content_bodies').values(p));
// PostgreSQL: the row, its body and the author's name in one statement (one round trip, not three).
const insertRowAndBody = prepared(
  (db, { skipTakenSlug, body, body_html, body_text, ...columns }: RowArgs & BodyColumns) =>
    db
      .with('c', (w) =>
        w
          .insertInto('contents')
          .values(columns)
          .$if(skipTakenSlug, (q) => q.onConflict((oc) => oc.columns(['site_id', 'locale', 'slug']).doNothing()))
          .returning(['id', 'site_id', 'author_id']),
      )
      .with('b', (w) =>
        w
          .insertInto('content_bodies')
          .columns(['content_id', 'site_id', 'body', 'body_html', 'body_text'])
          .expression((eb) =>
            eb.selectFrom('c').select((e) => ['c.id', 'c.site_id', e.val(body).as('body'), e.val(body_html).as('body_html'), e.val(body_text).as('body_text')]),
          ),
      )
      .selectFrom('c')
      .select((eb) => [
        'c.id',
        eb.selectFrom('users').select('full_name').whereRef('users.site_id', '=', 'c.site_id').whereRef('users.id', '=', 'c.author_id').as('author_name'),
      ]),
  { structural: ['skipTakenSlug'] },
);

/**
 * A content and its body (the row first: its id keys the body); answers the id and the author's
 * name. With `skipTakenSlug`, a slug already used in the row's locale answers null and writes
 * nothing; without it that is a unique violation, as any other clash is.
 */
export async function insertContent(
  db: Executor,
  row: Insertable<ContentsTable> & BodyColumns,
  { skipTakenSlug = false }: { skipTakenSlug?: boolean } = {},
): Promise<{ id: number; authorName: string | null } | null> {
  if (dialectOf(db).insertsInWith) {
    const inserted = await insertRowAndBody.executeTakeFirst(db, { ...row, skipTakenSlug });
    return inserted ? { id: Number(inserted.id), authorName: inserted.author_name ?? null } : null;
  }
  const { body, body_html, body_text, ...columns } = row;
  const inserted = await insertRow.executeTakeFirst(db, { ...columns, skipTakenSlug });
  if (!inserted) return null;
  const id = Number(inserted.id);
  await insertBody.execute(db, { content_id: id, site_id: columns.site_id, body, body_html, body_text });
  return { id, authorName: inserted.author_name ?? null };
}

/** A content's columns and, when the patch names any, its body's. */
export async function updateContent(db: Executor, siteId: string, id: number, patch: Updateable<ContentsTable> & Partial<BodyColumns>) {
  const { body, body_html, body_text, ...columns } = patch;
  if (body !== undefined || body_html !== undefined || body_text !== undefined)
    await db.updateTable('content_bodies').set({ body, body_html, body_text }).where('site_id', '=', siteId).where('content_id', '=', id).execute();
  await db.updateTable('contents').set(columns).where('site_id', '=', siteId).where('id', '=', id).execute();
}

/**
 * Moves the given contents to `status` when they are in one of `from`, and answers the rows that
 * changed: one statement, so concurrent bulk requests or schedulers never change a row twice.
 */
export async function transitionStatus(db: Executor, siteId: string, ids: number[], from: string[], patch: Updateable<ContentsTable>, v: Visibility) {
  if (!ids.length) return [] as ContentRecord[];
  let q = db
    .updateTable('contents')
    .set(patch)
    .where('site_id', '=', siteId)
    .where('id', 'in', ids)
    .where('status', 'in', from as ContentRow['status'][]);
  const { ownerId } = paramsOf(v);
  if (ownerId) q = q.where('author_id', '=', ownerId);
  return q.returning(RETURNED_COLUMNS).execute() as Promise<ContentRecord[]>;
}

export async function deleteContents(db: Executor, siteId: string, ids: number[], v: Visibility): Promise<number[]> {
  if (!ids.length) return [];
  let q = db.deleteFrom('contents').where('site_id', '=', siteId).where('id', 'in', ids);
  const { ownerId } = paramsOf(v);
  if (ownerId) q = q.where('author_id', '=', ownerId);
  const rows = await q.returning('id').execute();
  return rows.map((r) => Number(r.id));
}

/** Locale, id and slug of a translation group's members (for `alternates`: no text columns). */
const alternatesQuery = prepared(
  (db, p: VisibilityArgs & { group: string }) =>
    applyVisibilityParams(
      db
        .selectFrom('contents')
        .select(['contents.id', 'contents.locale', 'contents.slug'])
        .where('contents.site_id', '=', p.siteId)
        .where('contents.translation_group', '=', p.group),
      p,
    ),
  { structural: VISIBILITY_STRUCTURAL },
);

/** Locale, id and slug of a translation group's members (for `alternates`: no text columns). */
export async function groupAlternates(db: Executor, siteId: string, group: string, v: Visibility) {
  const rows = await alternatesQuery.execute(db, { ...visibilityArgs(siteId, v), group });
  return rows.sort((a, b) => (a.locale < b.locale ? -1 : a.locale > b.locale ? 1 : 0));
}

/**
 * The members of a translation group. Sorted here, not in SQL: an ORDER BY locale lets SQLite's
 * planner (without statistics) walk the (site_id, locale, slug) index over every content of the
 * site instead of looking the group up (23 ms instead of 0.05 ms at 10,000 contents).
 */
export async function groupMembers(db: Executor, siteId: string, group: string, v: Visibility) {
  const rows = (await applyVisibility(
    withBody(db.selectFrom('contents'))
      .select(['contents.id', 'contents.locale', 'contents.slug', 'contents.status', 'contents.title', 'contents.excerpt', 'cb.body_text'])
      .where('contents.site_id', '=', siteId)
      .where('contents.translation_group', '=', group) as unknown as ContentsQuery,
    v,
  ).execute()) as Array<{ id: number; locale: string; slug: string; status: string; title: string; excerpt: string | null; body_text: string | null }>;
  return rows.sort((a, b) => (a.locale < b.locale ? -1 : a.locale > b.locale ? 1 : 0));
}

/** Content revisions: the shared engine (kit/revisions.ts); `changes` lists the names of the fields that changed. */
export const revisions = revisionStore('content_revisions', 'content_id');

/**
 * The hot reads of the contents paths, compiled for a site (and ids): the plan test
 * (test/platform/query-plans.test.ts) checks that each one finds its rows through the index it
 * was written for, whatever the planner's statistics say.
 */
export const HOT_READS = {
  summariesByIds: (db: Executor, siteId: string, ids: number[]) => summariesQuery.compile(db, { siteId, ids }),
  listPage: (db: Executor, siteId: string) => listPage.compile(db, { siteId, limit: 15 }),
  listPagePublished: (db: Executor, siteId: string) => listPage.compile(db, { siteId, status: 'published', publishedOnly: true, limit: 15, offset: 300 }),
  byId: (db: Executor, siteId: string, ids: number[]) => contentDetailById.compile(db, { siteId, id: ids[0]! }),
  bySlug: (db: Executor, siteId: string) => contentBySlug.compile(db, { siteId, slug: 'post-1' }),
};
