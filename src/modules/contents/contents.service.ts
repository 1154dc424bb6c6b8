import { type Insertable, sql } from 'kysely';
import type { Db, Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { type StoredJson, storedJson } from '../../shared/stored-json.js';
import { AppError, invalid, issuesError, notFound } from '../../shared/errors.js';
import { findFreeSlug, retryLostSlug, slugify, slugsInLocale, slugTakenInLocale } from '../../shared/slug.js';
import { pageMeta } from '../../shared/pagination.js';
import { renderRichText } from '../../shared/richtext/render-pool.js';
import { validateFieldData } from '../../shared/field-schema/index.js';
import { translationStatus, newTranslationGroup, copyTargetLocale, assertLocaleFree, translatedIds } from '../../shared/translations/index.js';
import { cancelJob, emitEvent, scheduleJob } from '../../jobs/outbox.js';
import { type AuthContext, requireScope } from '../../plugins/auth.js';
import { getSiteLocales, resolveLocale } from '../../shared/site-locales.js';
import { effectiveSchemaOf } from '../categories/categories.rules.js';
import { setMediaReferences, variantsOfFileUrl } from '../media/media.references.js';
import { setOutboundLinks } from '../search-console/search-console.links.js';
import { contentPath, loadCategoryPaths, loadUrlContext, URL_CHANGED_JOB } from '../seo/seo.urls.js';
import * as repo from './contents.repository.js';
import type { RevisionRow } from '../../kit/revisions.js';
import { visibilityOf } from './content-links.js';
import { searchContents as search } from './contents.search.js';
import {
  type ContentCreateInput,
  type ContentListQueryValue,
  type ContentSearchQueryValue,
  type ContentStatus,
  type ContentUpdateInput,
  contentFields,
} from './contents.schemas.js';

type ContentRow = repo.ContentRow;
/** The columns the field map writes, as the insert and update statements type them. */
type ContentColumns = Pick<
  Insertable<repo.ContentsTable>,
  | 'title'
  | 'excerpt'
  | 'featured_image_url'
  | 'featured_image_alt'
  | 'meta_title'
  | 'meta_description'
  | 'meta_keywords'
  | 'canonical_url'
  | 'og_image'
  | 'metadata'
  | 'custom_data'
  | 'structured_data'
>;
type Auth = Pick<AuthContext, 'siteId' | 'userId' | 'access' | 'kind' | 'scopes'>;

export const PUBLISH_JOB = 'content.publish';
const jobKey = (id: number) => `${PUBLISH_JOB}:${id}`;

/**
 * A status other than draft, and any change of status, also needs `contents.publish` (decisions
 * G12, H10): publishing, scheduling, archiving, and taking a content out of those states. Its
 * `.own` twin allows it on the token user's own contents.
 */
const mayChangeStatus = (auth: Auth, authorId: string | null) => requireScope(auth, 'contents.publish', authorId, 'Changing the status of a content');

function futureScheduledAt(value: string | null | undefined, field = 'scheduledAt'): string {
  if (!value) throw invalid('SCHEDULED_AT_REQUIRED', field);
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw invalid('SCHEDULED_AT_REQUIRED', field);
  if (at <= Date.now()) throw invalid('SCHEDULED_AT_PAST', field);
  return new Date(at).toISOString();
}

const toIds = (list: Array<number | string> | undefined): number[] | undefined => (list ? [...new Set(list.map(Number))] : undefined);

// ------------------------------------------------------------------------------------------------
// Shapes

/** A content's categories and tags as it shows them. */
type Links = { categories: repo.Linked[]; tags: repo.Linked[] };

/** The links kept on a content's row (migration 0048): JSON text on SQLite, parsed jsonb on PostgreSQL. */
function linksOf(r: Pick<repo.SummaryRow, 'categories_list' | 'tags_list'>): Links {
  return { categories: parseJson<repo.Linked[]>(r.categories_list, []), tags: parseJson<repo.Linked[]>(r.tags_list, []) };
}

/** The ids of a content's categories and tags, in their order (what a revision stores). */
function linkedIds(r: ContentRow): repo.ContentLinks {
  const { categories, tags } = linksOf(r);
  return { categoryIds: categories.map((c) => Number(c.id)), tagIds: tags.map((t) => Number(t.id)) };
}

function featuredImage(url: string | null, alt: string | null) {
  return url ? { url, alt, variants: null } : null;
}

/**
 * Keeps which media files the featured image and the body use (decisions M15), and the links the
 * body makes (SC4), for the fields a write set (undefined: unchanged).
 */
async function setContentMedia(
  tx: Executor,
  siteId: string,
  id: number,
  featuredImageUrl: string | null | undefined,
  bodyHtml: string | undefined,
  known: { domain?: string; fresh?: boolean } = {},
) {
  const fields: Record<string, string | null> = {};
  if (featuredImageUrl !== undefined) fields.featuredImage = featuredImageUrl;
  if (bodyHtml !== undefined) fields.body = bodyHtml;
  await setMediaReferences(tx, siteId, { contentId: id }, fields, known.fresh);
  if (bodyHtml !== undefined) await setOutboundLinks(tx, siteId, { contentId: id }, bodyHtml, known);
}

/**
 * A JSON column as an answer writes it (decisions PF13): the text the reads select on both
 * databases as it is; a value (the lists a create's row built, a write's returned jsonb) serialized.
 */
function asStoredJson<T>(value: unknown): StoredJson<T> {
  return storedJson(typeof value === 'string' ? value : toJson(value));
}

/** A summary as the contents routes answer it: its categories and tags as stored JSON (decisions PF13). */
function toSummary(r: repo.SummaryRow) {
  return { ...summaryFields(r), categories: asStoredJson<repo.Linked[]>(r.categories_list ?? []), tags: asStoredJson<repo.Linked[]>(r.tags_list ?? []) };
}

/** A summary with its categories and tags as values (site blocks' data sources, whose answers are any JSON). */
function toPlainSummary(r: repo.SummaryRow) {
  return { ...summaryFields(r), ...linksOf(r) };
}

function summaryFields(r: repo.SummaryRow) {
  return {
    id: Number(r.id),
    title: r.title,
    slug: r.slug,
    type: 'post' as const,
    status: r.status,
    excerpt: r.excerpt,
    locale: r.locale,
    translationGroup: r.translation_group,
    featuredImage: featuredImage(r.featured_image_url, r.featured_image_alt),
    author: r.author_id && r.author_name !== null ? { id: r.author_id, fullName: r.author_name } : null,
    publishedAt: r.published_at,
    scheduledAt: r.scheduled_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

interface StructuredData {
  faq: Array<{ question: string; answer: string }>;
  article: { enabled: boolean; type: string };
}

function structuredDataOf(r: ContentRow): StructuredData {
  const sd = parseJson<Partial<StructuredData> | null>(r.structured_data, null) ?? {};
  return { faq: sd.faq ?? [], article: { enabled: sd.article?.enabled ?? false, type: sd.article?.type ?? 'Article' } };
}

/** JSON-LD blocks (Article, FAQPage) from the structured-data settings. */
function jsonLd(r: ContentRow, sd: StructuredData, author: { fullName: string } | null): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (sd.article.enabled) {
    out.push({
      '@context': 'https://schema.org',
      '@type': sd.article.type,
      headline: r.meta_title ?? r.title,
      ...(r.excerpt || r.meta_description ? { description: r.meta_description ?? r.excerpt } : {}),
      ...(r.featured_image_url ? { image: r.featured_image_url } : {}),
      ...(r.published_at ? { datePublished: r.published_at } : {}),
      dateModified: r.updated_at,
      ...(author ? { author: { '@type': 'Person', name: author.fullName } } : {}),
      inLanguage: r.locale,
    });
  }
  if (sd.faq.length) {
    out.push({
      '@context': 'https://schema.org',
      '@type': 'FAQPage',
      mainEntity: sd.faq.map((f) => ({ '@type': 'Question', name: f.question, acceptedAnswer: { '@type': 'Answer', text: f.answer } })),
    });
  }
  return out;
}

type Member = { id: number | string; locale: string; slug: string };
const byLocale = (a: { locale: string }, b: { locale: string }) => (a.locale < b.locale ? -1 : a.locale > b.locale ? 1 : 0);

type Alternate = { locale: string; id: number; slug: string };
/**
 * A detail's alternates: from the row when it was read with them (one statement,
 * repo.findContentDetail), else `known` (a create in a new group has none), else looked up.
 */
async function detailAlternates(db: Executor, siteId: string, r: ContentRow | repo.DetailRow, v: repo.Visibility, known?: Alternate[]) {
  if ('alternates_list' in r) {
    const members = parseJson<Member[]>(r.alternates_list, []);
    return members.sort(byLocale).map((m) => ({ locale: m.locale, id: Number(m.id), slug: m.slug }));
  }
  if (known) return known;
  const id = Number(r.id);
  return (await repo.groupAlternates(db, siteId, r.translation_group, v))
    .filter((m) => Number(m.id) !== id)
    .map((m) => ({ locale: m.locale, id: Number(m.id), slug: m.slug }));
}

/**
 * The detail shape. The body is written into the answer as the JSON text it is stored as (decisions
 * N11, PF13): the detail reads select PostgreSQL's jsonb as text too (PF5), and a write's row holds
 * the text it stored.
 */
async function toDetail(db: Executor, siteId: string, r: ContentRow | repo.DetailRow, v: repo.Visibility, knownAlternates?: Alternate[]) {
  const alternates = await detailAlternates(db, siteId, r, v, knownAlternates);
  const summary = toSummary(r);
  const sd = structuredDataOf(r);
  const variants = await variantsOfFileUrl(db, siteId, r.featured_image_url);
  return {
    ...summary,
    featuredImage: summary.featuredImage && { ...summary.featuredImage, variants },
    body: asStoredJson<Record<string, unknown> | null>(r.body),
    bodyHtml: r.body_html,
    meta: { metaTitle: r.meta_title, metaDescription: r.meta_description, metaKeywords: r.meta_keywords, canonicalUrl: r.canonical_url, ogImage: r.og_image },
    alternates,
    metadata: parseJson<Record<string, unknown>>(r.metadata, {}) ?? {},
    customData: parseJson<Record<string, unknown> | null>(r.custom_data, null),
    structuredData: sd,
    jsonLd: jsonLd(r, sd, summary.author),
  };
}

/** The full editable state of a content, in API names: what a revision stores and restores. */
function snapshotOf(r: ContentRow): Record<string, unknown> {
  const links = linkedIds(r);
  return {
    ...contentFields.toApi(r),
    status: r.status,
    // The stored JSON text, never parsed here: snapshotJson splices it in (a 1 MB body's
    // document would otherwise be parsed and serialized again on every write).
    body: r.body === null ? null : typeof r.body === 'string' ? r.body : toJson(r.body),
    scheduledAt: r.scheduled_at,
    publishedAt: r.published_at,
    categoryIds: links.categoryIds,
    tagIds: links.tagIds,
  };
}

function changedFields(before: Record<string, unknown> | null, after: Record<string, unknown>): string[] {
  return Object.keys(after).filter((k) => {
    if (!before) return true;
    const [a, b] = [before[k] ?? null, after[k] ?? null];
    return typeof a === 'string' && typeof b === 'string' ? a !== b : JSON.stringify(a) !== JSON.stringify(b);
  });
}

/** A snapshot as stored: its `body` (JSON text, see snapshotOf) spliced in as JSON, first. */
function snapshotJson(snapshot: Record<string, unknown>): string {
  const { body, ...rest } = snapshot;
  return `{"body":${(body as string | null) ?? 'null'},${toJson(rest).slice(1)}`;
}

/** Every create and update writes one revision: who, when, what changed, a full snapshot (decisions C3). */
async function writeRevision(tx: Executor, siteId: string, contentId: number, authorId: string | null, action: string, before: Record<string, unknown> | null) {
  const row = (await repo.findContent(tx, siteId, contentId, repo.ALL_CONTENTS))!;
  await recordRevision(tx, siteId, contentId, authorId, action, before, snapshotOf(row));
  return row;
}

async function recordRevision(
  tx: Executor,
  siteId: string,
  contentId: number,
  authorId: string | null,
  action: string,
  before: Record<string, unknown> | null,
  snapshot: Record<string, unknown>,
) {
  await repo.revisions.record(tx, {
    siteId,
    ownerId: contentId,
    authorId,
    action,
    changes: changedFields(before, snapshot),
    snapshot: snapshotJson(snapshot),
    at: now(),
  });
}

export function eventData(r: Pick<ContentRow, 'id' | 'title' | 'slug' | 'locale' | 'status' | 'published_at'>) {
  return { id: Number(r.id), title: r.title, slug: r.slug, locale: r.locale, status: r.status, publishedAt: r.published_at };
}

// ------------------------------------------------------------------------------------------------
// Reads

/** The sort columns a cursor can page on: never null, so `(value, id)` orders every row (decisions MP1). */
const CURSOR_SORTS = new Set(['created_at', 'updated_at', 'title', 'slug']);
type ListCursor = { sortBy: string; sortOrder: 'asc' | 'desc'; value: string; id: number };

/** The list's sort as the repository applies it: `created_at desc` unless asked, a named column ascending. */
function sortOf(query: ContentListQueryValue): { sortBy: string; sortOrder: 'asc' | 'desc' } {
  return { sortBy: query.sortBy ?? 'created_at', sortOrder: query.sortOrder ?? (query.sortBy ? 'asc' : 'desc') };
}

/** A cursor is opaque to clients: base64url JSON of the sort, and the last row's sort value and id. */
function encodeCursor(c: ListCursor): string {
  return Buffer.from(JSON.stringify([c.sortBy, c.sortOrder, c.value, c.id])).toString('base64url');
}

function decodeCursor(text: string): ListCursor {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parts = null;
  }
  if (!Array.isArray(parts) || parts.length !== 4) throw invalid('VALIDATION_FAILED', 'cursor', 'cursor is not a cursor this list gave');
  const [sortBy, sortOrder, value, id] = parts as unknown[];
  if (
    typeof sortBy !== 'string' ||
    !CURSOR_SORTS.has(sortBy) ||
    (sortOrder !== 'asc' && sortOrder !== 'desc') ||
    typeof value !== 'string' ||
    typeof id !== 'number' ||
    !Number.isSafeInteger(id) ||
    id < 1
  )
    throw invalid('VALIDATION_FAILED', 'cursor', 'cursor is not a cursor this list gave');
  return { sortBy, sortOrder, value, id };
}

/**
 * A page by number (decisions G5) or after a cursor (decisions MP1). `meta.nextCursor` names the
 * page after this one (null on the last page, and for `sortBy=published_at`, whose drafts have no
 * value to page on); with a cursor the page number is unknown, so `meta.currentPage` is null.
 */
export async function listContents(db: Executor, auth: Auth, query: ContentListQueryValue) {
  let sort = sortOf(query);
  let after: repo.ListAfter | undefined;
  if (query.cursor !== undefined) {
    const cursor = decodeCursor(query.cursor);
    if (query.page !== 1) throw invalid('VALIDATION_FAILED', 'page', 'page cannot be combined with cursor');
    if ((query.sortBy !== undefined && query.sortBy !== cursor.sortBy) || (query.sortOrder !== undefined && query.sortOrder !== cursor.sortOrder))
      throw invalid('VALIDATION_FAILED', 'cursor', 'cursor belongs to another sort order');
    sort = { sortBy: cursor.sortBy, sortOrder: cursor.sortOrder };
    after = { value: cursor.value, id: cursor.id };
  }
  const { rows, total } = await repo.listContents(db, auth.siteId, { ...query, ...sort } as unknown as ContentListQueryValue, visibilityOf(auth), true, after);
  const last = rows.at(-1);
  const more = after ? rows.length === query.limit : (query.page - 1) * query.limit + rows.length < total;
  const nextCursor =
    last && more && CURSOR_SORTS.has(sort.sortBy) ? encodeCursor({ ...sort, value: String(last[sort.sortBy as 'created_at']), id: Number(last.id) }) : null;
  const meta = pageMeta(total, query.page, query.limit);
  return { data: rows.map(toSummary), meta: { ...meta, currentPage: after ? null : meta.currentPage, nextCursor } };
}

/** The summaries of a list's page without counting the list (site blocks' data sources show no pages). */
export async function listContentSummaries(db: Executor, auth: Auth, query: ContentListQueryValue) {
  const { rows } = await repo.listContents(db, auth.siteId, query, visibilityOf(auth), false);
  return { data: rows.map(toPlainSummary) };
}

/** A content by id. */
export async function getContent(db: Executor, auth: Auth, id: number) {
  const v = visibilityOf(auth);
  const row = await repo.findContentDetail(db, auth.siteId, id, v);
  if (!row) throw notFound('content');
  return toDetail(db, auth.siteId, row, v);
}

export async function getContentBySlug(db: Executor, auth: Auth, slug: string, locale?: string) {
  const v = visibilityOf(auth);
  const row = await repo.findContentBySlug(db, auth.siteId, slug, locale, v);
  if (!row) throw notFound('content');
  return toDetail(db, auth.siteId, row, v);
}

/** Full-text search with every list filter (decisions C4): hits in rank order, as summaries plus highlights. */
export async function searchContents(db: Executor, auth: Auth, query: ContentSearchQueryValue) {
  const { q, page, limit, ...filters } = query;
  const { hits, total, capped } = await search(
    db,
    auth.siteId,
    q,
    { apply: repo.applyListFilters, args: repo.listFilterArgs(auth.siteId, filters, visibilityOf(auth)), structural: repo.LIST_STRUCTURAL },
    query,
  );
  const rows = await repo.summariesByIds(
    db,
    auth.siteId,
    hits.map((h) => h.id),
  );
  const byId = new Map(rows.map((r) => [Number(r.id), toSummary(r)]));
  const data = hits.filter((h) => byId.has(h.id)).map((h) => ({ ...byId.get(h.id)!, highlights: { title: h.titleHighlight, body: h.bodyHighlight } }));
  return { data, meta: { ...pageMeta(total, query.page, query.limit), capped } };
}

// ------------------------------------------------------------------------------------------------
// Writes

/** The categories and tags a write links, as the site has them (for its answer); one it does not have is a 422. */
async function checkRefs(tx: Executor, siteId: string, categoryIds: number[] | undefined, tagIds: number[] | undefined) {
  const categories = await repo.refsByIds(tx, 'categories', siteId, categoryIds ?? []);
  const missingCategories = (categoryIds ?? []).filter((id) => !categories.has(id));
  if (missingCategories.length) throw invalid('CATEGORY_NOT_FOUND', 'categoryIds', `No category ${missingCategories.join(', ')} on this site.`);
  const tags = await repo.refsByIds(tx, 'tags', siteId, tagIds ?? []);
  const missingTags = (tagIds ?? []).filter((id) => !tags.has(id));
  if (missingTags.length) throw invalid('TAG_NOT_FOUND', 'tagIds', `No tag ${missingTags.join(', ')} on this site.`);
  return { categories, tags };
}

/** customData needs a category with a structured schema and must match it (spec "Specific 422 conditions"). */
async function checkCustomData(tx: Executor, siteId: string, customData: Record<string, unknown> | null, categoryIds: number[]) {
  if (customData === null) return;
  for (const id of categoryIds) {
    const schema = await effectiveSchemaOf(tx, siteId, id);
    if (!schema) continue;
    const issues = validateFieldData(schema, customData, 'customData');
    if (issues.length) throw issuesError('DATA_INVALID', issues);
    return;
  }
  throw invalid('CUSTOM_DATA_NOT_ALLOWED', 'customData');
}

/**
 * Characters of a body's plain text kept in `body_text`, the text search indexes (decisions
 * H19): PostgreSQL cannot hold a tsvector over 1 MB, and highlighting reads the whole column.
 * Words past it are not found by search; the body itself, its HTML and markdown are whole.
 */
export const SEARCH_TEXT_MAX = 100_000;

async function renderBody(input: { body?: unknown; bodyMarkdown?: string | null }) {
  const result = await renderRichText(input);
  if (result && !result.ok) throw issuesError('BODY_INVALID', result.issues);
  return result ? { body: result.value.docJson, body_html: result.value.html, body_text: searchText(result.value.text) } : null;
}

/** The first SEARCH_TEXT_MAX characters, not cutting a surrogate pair in two. */
function searchText(text: string): string {
  if (text.length <= SEARCH_TEXT_MAX) return text;
  const end = /[\uD800-\uDBFF]/.test(text[SEARCH_TEXT_MAX - 1]!) ? SEARCH_TEXT_MAX - 1 : SEARCH_TEXT_MAX;
  return text.slice(0, end);
}

/** Creates a content. */
export async function createContent(db: Db, auth: Auth, input: ContentCreateInput) {
  const status: ContentStatus = input.status ?? 'draft';
  if (status !== 'draft') mayChangeStatus(auth, auth.userId);
  const scheduledAt = status === 'scheduled' ? futureScheduledAt(input.scheduledAt) : null;
  const rendered = await renderBody(input);
  const categoryIds = toIds(input.categoryIds) ?? [];
  const tagIds = toIds(input.tagIds) ?? [];
  return retryLostSlug(!input.slug, () => insertContent(db, auth, input, { status, scheduledAt, rendered, categoryIds, tagIds }));
}

/** createContent's transaction, with what was checked and rendered before it (run again when a generated slug lost a race). */
async function insertContent(
  db: Db,
  auth: Auth,
  input: ContentCreateInput,
  checked: {
    status: ContentStatus;
    scheduledAt: string | null;
    rendered: Awaited<ReturnType<typeof renderBody>>;
    categoryIds: number[];
    tagIds: number[];
  },
) {
  const siteId = auth.siteId;
  const { status, scheduledAt, rendered, categoryIds, tagIds } = checked;
  return db.transaction().execute(async (tx) => {
    // Read on the transaction's connection: on SQLite the writer's cache is warm, while the
    // reader's was emptied by the last write (PF21). The domain tells internal links from others.
    const site = await getSiteLocales(tx, siteId);
    const locale = resolveLocale(site, input.locale);
    const domain = site.domain;
    const refs = await checkRefs(tx, siteId, categoryIds, tagIds);
    await checkCustomData(tx, siteId, (input.customData ?? null) as Record<string, unknown> | null, categoryIds);
    const base = slugify(input.title, 500) || 'post';
    const freeSlug = () => findFreeSlug(base, (c) => slugsInLocale(tx, 'contents', siteId, locale, c), 500);
    let slug = input.slug;
    let group = input.translationGroup;
    if (group) {
      // Checked before the insert in the order of every create: the slug, then the group's locale.
      if (slug) {
        if (await slugTakenInLocale(tx, 'contents', siteId, locale, slug)) throw invalid('SLUG_TAKEN', 'slug');
      } else slug = await freeSlug();
      await assertLocaleFree(tx, 'contents', siteId, group, locale);
    } else group = newTranslationGroup();
    const at = now();
    const values = {
      // Every column of the map, null when not sent (insertRow).
      ...(contentFields.insertRow(input) as Required<ContentColumns>),
      site_id: siteId,
      type: 'post',
      // A generated slug is tried as it is first (the usual case: free); the insert says when it is taken.
      slug: slug ?? base,
      status,
      locale,
      translation_group: group,
      author_id: auth.userId,
      body: rendered?.body ?? null,
      body_html: rendered?.body_html ?? '',
      body_text: rendered?.body_text ?? '',
      scheduled_at: scheduledAt,
      published_at: status === 'published' ? at : null,
      created_at: at,
      updated_at: at,
    };
    let inserted = await repo.insertContent(tx, values, { skipTakenSlug: true });
    if (!inserted) {
      // The slug is taken (nothing was written): a sent one is the 422, a generated one moves on to
      // the first free suffix, as findFreeSlug chose it before (a clash now is PostgreSQL's lost
      // race, a unique violation that retryLostSlug answers by running the create again).
      if (input.slug) throw invalid('SLUG_TAKEN', 'slug');
      values.slug = await freeSlug();
      inserted = (await repo.insertContent(tx, values))!;
    }
    const id = inserted.id;
    // The row as stored, from what was inserted: reading it back would copy a large body out of
    // SQLite again on the event loop (issue 15); the author's name came back with the insert, and
    // its lists are what the link triggers are about to keep (the write's checked references).
    const row: ContentRow = {
      ...values,
      id,
      author_name: inserted.authorName,
      categories_list: categoryIds.map((c) => refs.categories.get(c)!),
      tags_list: tagIds.map((t) => refs.tags.get(t)!),
    };
    // The row is new: its links, references and outbound links are inserted, nothing deleted first.
    await repo.setCategories(tx, siteId, id, categoryIds, true);
    await repo.setTags(tx, siteId, id, tagIds, true);
    await setContentMedia(tx, siteId, id, input.featuredImageUrl ?? null, rendered?.body_html ?? '', { domain, fresh: true });
    await recordRevision(tx, siteId, id, auth.userId, 'create', null, snapshotOf(row));
    if (status === 'published') await emitEvent(tx, siteId, 'content.published', eventData(row));
    if (status === 'scheduled') await scheduleJob(tx, { siteId, type: PUBLISH_JOB, key: jobKey(id), payload: { contentId: id }, runAt: scheduledAt! });
    // A new group has no other member: no lookup.
    return toDetail(tx, siteId, row, visibilityOf(auth), input.translationGroup ? undefined : []);
  });
}

/** A partial update. */
export async function updateContent(db: Db, auth: Auth, id: number, input: ContentUpdateInput) {
  const siteId = auth.siteId;
  const rendered =
    input.body !== undefined || input.bodyMarkdown !== undefined ? ((await renderBody(input)) ?? { body: null, body_html: '', body_text: '' }) : undefined;
  return db.transaction().execute(async (tx) => {
    const v = visibilityOf(auth);
    const row = await repo.findContent(tx, siteId, id, v);
    if (!row) throw notFound('content');
    const before = snapshotOf(row);
    const status = input.status ?? row.status;
    const statusChanged = status !== row.status;
    // An update alone never unpublishes: only an explicit status does (spec "Content status").
    if (statusChanged) mayChangeStatus(auth, row.author_id);

    const categoryIds = toIds(input.categoryIds);
    const tagIds = toIds(input.tagIds);
    await checkRefs(tx, siteId, categoryIds, tagIds);
    if (input.customData !== undefined || categoryIds) {
      const customData = input.customData !== undefined ? input.customData : parseJson<Record<string, unknown> | null>(row.custom_data, null);
      await checkCustomData(tx, siteId, customData as Record<string, unknown> | null, categoryIds ?? (before.categoryIds as number[]));
    }
    if (input.slug && input.slug !== row.slug && (await slugTakenInLocale(tx, 'contents', siteId, row.locale, input.slug, id)))
      throw invalid('SLUG_TAKEN', 'slug');

    const at = now();
    let scheduledAt: string | null | undefined;
    let publishedAt: string | null | undefined;
    if (status === 'scheduled' && (statusChanged || input.scheduledAt !== undefined)) {
      scheduledAt = futureScheduledAt(input.scheduledAt !== undefined ? input.scheduledAt : row.scheduled_at);
      await scheduleJob(tx, { siteId, type: PUBLISH_JOB, key: jobKey(id), payload: { contentId: id }, runAt: scheduledAt });
    } else if (statusChanged && row.status === 'scheduled') {
      scheduledAt = null;
      await cancelJob(tx, siteId, jobKey(id));
    }
    if (statusChanged && status === 'published') publishedAt = row.published_at ?? at;

    await repo.updateContent(tx, siteId, id, {
      ...(contentFields.patch(input) as Partial<ContentColumns>),
      status: statusChanged ? status : undefined,
      ...(rendered ?? {}),
      scheduled_at: scheduledAt,
      published_at: publishedAt,
      updated_at: at,
    });
    if (categoryIds) await repo.setCategories(tx, siteId, id, categoryIds);
    if (tagIds) await repo.setTags(tx, siteId, id, tagIds);
    await setContentMedia(tx, siteId, id, input.featuredImageUrl, rendered?.body_html);
    const action = !statusChanged
      ? 'update'
      : status === 'published'
        ? 'publish'
        : status === 'scheduled'
          ? 'schedule'
          : status === 'archived'
            ? 'archive'
            : 'update';
    const updated = await writeRevision(tx, siteId, id, auth.userId, action, before);
    if (row.status === 'published' && status === 'published') await announceUrlChange(tx, siteId, row, before, input.slug, categoryIds);
    if (statusChanged && status === 'published') await emitEvent(tx, siteId, 'content.published', eventData(updated));
    if (statusChanged && status === 'archived') await emitEvent(tx, siteId, 'content.archived', eventData(updated));
    return toDetail(tx, siteId, updated, visibilityOf(auth));
  });
}

/**
 * A published content whose public URL changes (its slug, or in nested mode its first category)
 * schedules URL_CHANGED_JOB in the same transaction, with the old and new paths built by the one
 * URL builder (decisions G18, R11); the redirects module decides whether to redirect.
 */
async function announceUrlChange(
  tx: Executor,
  siteId: string,
  row: ContentRow,
  before: Record<string, unknown>,
  slug: string | undefined,
  categoryIds: number[] | undefined,
): Promise<void> {
  if ((slug === undefined || slug === row.slug) && !categoryIds) return;
  const urls = await loadUrlContext(tx, siteId);
  if (!urls) return;
  const categoryPathOf = urls.blogUrlMode === 'nested' ? await loadCategoryPaths(tx, siteId) : null;
  const pathOf = (s: string, categories: number[]) =>
    contentPath(urls, { slug: s, locale: row.locale, type: row.type, categoryPath: categoryPathOf && categories[0] ? categoryPathOf(categories[0]) : [] });
  const from = pathOf(row.slug, before.categoryIds as number[]);
  const to = pathOf(slug ?? row.slug, categoryIds ?? (before.categoryIds as number[]));
  if (from !== to) await scheduleJob(tx, { siteId, type: URL_CHANGED_JOB, payload: { contentId: Number(row.id), from, to }, runAt: now() });
}

/**
 * Bulk status changes (decisions C2, G16): one statement moves every listed content that is in
 * one of `from` (skipping the rest), then one revision and one event per content changed, all in
 * one transaction, so a failure changes and emits nothing.
 */
async function bulkTransition(db: Db, auth: Auth, ids: Array<number | string>, from: ContentStatus[], to: 'published' | 'archived') {
  const list = toIds(ids)!;
  return db.transaction().execute(async (tx) => {
    const at = now();
    const changed = await repo.transitionStatus(
      tx,
      auth.siteId,
      list,
      from,
      {
        status: to,
        scheduled_at: null,
        updated_at: at,
        ...(to === 'published' ? { published_at: sql<string>`coalesce(published_at, ${at})` as unknown as string } : {}),
      },
      visibilityOf(auth),
    );
    for (const row of changed) {
      const id = Number(row.id);
      await cancelJob(tx, auth.siteId, jobKey(id));
      await writeRevision(tx, auth.siteId, id, auth.userId, to === 'published' ? 'publish' : 'archive', null);
      await emitEvent(tx, auth.siteId, to === 'published' ? 'content.published' : 'content.archived', eventData(row));
    }
    return changed.length;
  });
}

export function bulkPublish(db: Db, auth: Auth, ids: Array<number | string>) {
  return bulkTransition(db, auth, ids, ['draft', 'scheduled', 'archived'], 'published');
}

export function bulkArchive(db: Db, auth: Auth, ids: Array<number | string>) {
  return bulkTransition(db, auth, ids, ['draft', 'scheduled', 'published'], 'archived');
}

/** Deletes contents with their revisions, links and translation membership; irreversible. */
export async function bulkDelete(db: Db, auth: Auth, ids: Array<number | string>) {
  const list = toIds(ids)!;
  return db.transaction().execute(async (tx) => {
    const deleted = await repo.deleteContents(tx, auth.siteId, list, visibilityOf(auth));
    for (const id of deleted) await cancelJob(tx, auth.siteId, jobKey(id));
    return deleted.length;
  });
}

/** The scheduler's job: publish a scheduled content that is due, once (decisions C2, G15). */
export async function publishScheduled(db: Db, siteId: string, contentId: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const at = now();
    const row = await repo.findContent(tx, siteId, contentId, repo.ALL_CONTENTS);
    if (row?.status !== 'scheduled' || !row.scheduled_at) return false;
    if (Date.parse(row.scheduled_at) > Date.now()) {
      await scheduleJob(tx, { siteId, type: PUBLISH_JOB, key: jobKey(contentId), payload: { contentId }, runAt: row.scheduled_at });
      return false;
    }
    const [changed] = await repo.transitionStatus(
      tx,
      siteId,
      [contentId],
      ['scheduled'],
      { status: 'published', scheduled_at: null, published_at: at, updated_at: at },
      repo.ALL_CONTENTS,
    );
    if (!changed) return false;
    await writeRevision(tx, siteId, contentId, null, 'publish', null);
    await emitEvent(tx, siteId, 'content.published', eventData(changed));
    return true;
  });
}

// ------------------------------------------------------------------------------------------------
// Revisions

/** A content revision as the API shows it: `changedFields` names what changed (decisions C3). */
function contentRevision(r: RevisionRow) {
  return { id: r.id, contentId: r.ownerId, action: r.action, changedFields: r.changes as string[], author: r.author, createdAt: r.createdAt };
}

export async function listRevisions(db: Executor, auth: Auth, id: number, page: { page: number; limit: number }) {
  if (!(await repo.findContent(db, auth.siteId, id, visibilityOf(auth)))) throw notFound('content');
  const { rows, total } = await repo.revisions.list(db, auth.siteId, id, page);
  return { data: rows.map(contentRevision), meta: pageMeta(total, page.page, page.limit) };
}

export async function getRevision(db: Executor, auth: Auth, id: number, revisionId: number) {
  if (!(await repo.findContent(db, auth.siteId, id, visibilityOf(auth)))) throw notFound('content');
  const r = await repo.revisions.find(db, auth.siteId, id, revisionId);
  if (!r) throw new AppError('REVISION_NOT_FOUND');
  return { ...contentRevision(r), snapshot: parseJson<Record<string, unknown>>(r.snapshot, {}) };
}

/**
 * Brings a revision's content back as a new revision. The status stays as it is (restoring never
 * publishes or unpublishes); links to categories or tags deleted since are dropped.
 */
export async function restoreRevision(db: Db, auth: Auth, id: number, revisionId: number) {
  const revision = await getRevision(db, auth, id, revisionId);
  const s = revision.snapshot as Record<string, any>;
  const body = (s.body ? await renderBody({ body: s.body }) : null) ?? { body: null, body_html: '', body_text: '' };
  return db.transaction().execute(async (tx) => {
    const row = await repo.findContent(tx, auth.siteId, id, visibilityOf(auth));
    if (!row) throw notFound('content');
    const before = snapshotOf(row);
    const slugFree = !(await slugTakenInLocale(tx, 'contents', auth.siteId, row.locale, s.slug, id));
    await repo.updateContent(tx, auth.siteId, id, {
      ...(contentFields.patch(s) as Partial<ContentColumns>),
      slug: slugFree ? s.slug : row.slug,
      ...body,
      updated_at: now(),
    });
    await setContentMedia(tx, auth.siteId, id, (s.featuredImageUrl as string | null | undefined) ?? null, body.body_html);
    const cats = await repo.refsByIds(tx, 'categories', auth.siteId, s.categoryIds ?? []);
    const tags = await repo.refsByIds(tx, 'tags', auth.siteId, s.tagIds ?? []);
    await repo.setCategories(
      tx,
      auth.siteId,
      id,
      (s.categoryIds ?? []).filter((c: number) => cats.has(c)),
    );
    await repo.setTags(
      tx,
      auth.siteId,
      id,
      (s.tagIds ?? []).filter((t: number) => tags.has(t)),
    );
    const updated = await writeRevision(tx, auth.siteId, id, auth.userId, 'restore', before);
    return toDetail(tx, auth.siteId, updated, visibilityOf(auth));
  });
}

// ------------------------------------------------------------------------------------------------
// Translations (decisions G10)

export async function contentTranslations(db: Executor, auth: Auth, id: number) {
  const v = visibilityOf(auth);
  const row = await repo.findContent(db, auth.siteId, id, v);
  if (!row) throw notFound('content');
  const { enabledLocales } = await getSiteLocales(db, auth.siteId);
  const members = await repo.groupMembers(db, auth.siteId, row.translation_group, v);
  const fields = (m: { title: string; excerpt: string | null; body_text: string | null }) => ({ title: m.title, excerpt: m.excerpt, body: m.body_text ?? '' });
  // The content is one of its group's members (the same visibility): its search text comes from there.
  const self = members.find((m) => Number(m.id) === Number(row.id));
  if (!self) throw notFound('content');
  return translationStatus(
    { locale: row.locale, fields: fields(self), published: row.status === 'published' },
    members.map((m) => ({ locale: m.locale, fields: fields(m), published: m.status === 'published' })),
    enabledLocales,
  );
}

/** A draft copy in the target locale, in the same group; categories and tags map to their translations there. */
export async function copyContentToLocale(db: Db, auth: Auth, id: number, body: { targetLocale?: string; locale?: string }) {
  const target = copyTargetLocale(await getSiteLocales(db, auth.siteId), body);
  return db.transaction().execute(async (tx) => {
    const row = await repo.findContent(tx, auth.siteId, id, visibilityOf(auth));
    if (!row) throw notFound('content');
    await assertLocaleFree(tx, 'contents', auth.siteId, row.translation_group, target);
    const links = linkedIds(row);
    const slug = await findFreeSlug(row.slug, (c) => slugsInLocale(tx, 'contents', auth.siteId, target, c), 500);
    const at = now();
    // Columns named through the field map: the row may carry database-maintained columns (a search vector).
    const { id: newId } = (await repo.insertContent(tx, {
      ...(contentFields.insertRow(contentFields.toApi(row)) as ContentColumns),
      site_id: auth.siteId,
      type: row.type,
      slug,
      status: 'draft',
      locale: target,
      translation_group: row.translation_group,
      author_id: auth.userId,
      body: row.body === null ? null : toJson(parseJson(row.body, null)),
      body_html: row.body_html,
      body_text: await repo.bodyText(tx, auth.siteId, id),
      scheduled_at: null,
      published_at: null,
      created_at: at,
      updated_at: at,
    }))!;
    await repo.setCategories(tx, auth.siteId, newId, await translatedIds(tx, 'categories', auth.siteId, links.categoryIds, target));
    await repo.setTags(tx, auth.siteId, newId, await translatedIds(tx, 'tags', auth.siteId, links.tagIds, target));
    await setContentMedia(tx, auth.siteId, newId, row.featured_image_url, row.body_html);
    const created = await writeRevision(tx, auth.siteId, newId, auth.userId, 'create', null);
    return toDetail(tx, auth.siteId, created, visibilityOf(auth));
  });
}
