import type { Static } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Db, Executor } from '../../db/types.js';
import { emitEvent } from '../../jobs/outbox.js';
import { type FieldChange, fieldChanges, type RevisionRow } from '../../kit/revisions.js';
import type { AuthContext } from '../../plugins/auth.js';
import { setMediaReferences } from '../media/media.references.js';
import { setOutboundLinks } from '../search-console/search-console.links.js';
import { AppError, invalid, issuesError, notFound } from '../../shared/errors.js';
import { type FieldDefinition, fieldSchemaFromInput, validateFieldData } from '../../shared/field-schema/index.js';
import { canonicalLocale } from '../../shared/locales.js';
import { pageMeta } from '../../shared/pagination.js';
import { getSiteLocales, resolveLocale } from '../../shared/site-locales.js';
import { findFreeSlug, retryLostSlug, slugify, slugsInLocale } from '../../shared/slug.js';
import { assertLocaleFree, copyTargetLocale, groupMembers, newTranslationGroup, translationStatus } from '../../shared/translations/index.js';
import { type Audience, listSiteBlocks } from './site-blocks.list.js';
import * as repo from './site-blocks.repository.js';
import type { SiteBlockRow } from './site-blocks.repository.js';
import { type BlockType, type SiteBlockCreate, type SiteBlockListQuery, type SiteBlockUpdate, siteBlockFields } from './site-blocks.resource.js';
import { checkDataSources, resolveDataSources } from './site-blocks.sources.js';

type Auth = Pick<AuthContext, 'siteId' | 'userId' | 'kind'>;
type Data = Record<string, unknown>;

/** Paths under /site-blocks that are not slugs: a block can never take these slugs. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['by-path', 'settings']);

export const audienceOf = (auth: Pick<AuthContext, 'kind'>): Audience => (auth.kind === 'delivery' ? 'published' : 'all');

// ------------------------------------------------------------------------------------------------
// Rules on values

/**
 * A page path as stored: starts with `/`, no query string, fragment, blank, control character,
 * empty or dot segment; a trailing slash is dropped (`/about/` is `/about`), `/` stays.
 */
export function normalizePath(input: string, field = 'path'): string {
  const path = input.length > 1 ? input.replace(/\/+$/, '') : input;
  const bad =
    !path.startsWith('/') ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    /[?#\s\u0000-\u001f\u007f]/.test(path) ||
    (path !== '/' &&
      path
        .slice(1)
        .split('/')
        .some((s) => s === '' || s === '.' || s === '..'));
  if (bad) throw invalid('PATH_INVALID', field);
  return path;
}

/** `[...]` or `{ fields }` -> the checked, normalised schema, its dataSource filters checked against their groups' lists. */
function parseSchema(input: unknown): FieldDefinition[] {
  const parsed = fieldSchemaFromInput(input);
  if (!parsed.ok) throw issuesError('SCHEMA_INVALID', parsed.issues);
  const schema = parsed.schema ?? [];
  checkDataSources(schema);
  return schema;
}

function checkData(schema: FieldDefinition[], data: Data): void {
  const issues = validateFieldData(schema, data, 'data');
  if (issues.length) throw issuesError('DATA_INVALID', issues);
}

const isPlainObject = (v: unknown): v is Data => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The stored data with the sent fields merged in: objects merged key by key, anything else
 * (arrays included) replaced, `null` kept as a cleared value. A `__proto__` key is never
 * assigned (it would change the object's prototype instead of adding a field).
 */
export function mergeData(base: Data, patch: Data): Data {
  const out: Data = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (key === '__proto__') continue;
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? mergeData(current, value) : value;
  }
  return out;
}

/** Type and path together: a page block needs a path, a global block has none. */
function typedPath(type: BlockType, path: string | null | undefined): string | null {
  if (type === 'global') {
    if (path !== undefined && path !== null) throw invalid('VALIDATION_FAILED', 'path', 'Only page blocks have a path.');
    return null;
  }
  if (path === undefined || path === null) throw invalid('VALIDATION_FAILED', 'path', 'A page block needs a path, e.g. /about.');
  return normalizePath(path);
}

async function assertPathFree(db: Executor, siteId: string, locale: string, path: string | null, exceptId?: number) {
  if (path !== null && (await repo.pathHolder(db, siteId, locale, path, exceptId)) !== undefined) {
    throw invalid('PATH_TAKEN', 'path', `Another page block of ${locale} already has the path ${path}.`);
  }
}

const freeSlug = (tx: Executor, siteId: string, locale: string, base: string) =>
  findFreeSlug(base, async (candidates) => {
    const taken = await slugsInLocale(tx, 'site_blocks', siteId, locale, candidates);
    for (const c of candidates) if (RESERVED_SLUGS.has(c)) taken.add(c);
    return taken;
  });

/**
 * The locale a slug-addressed request names: `?locale=`, else the site's default. A locale that
 * is no longer enabled still finds its blocks (so they can be read and deleted).
 */
async function addressedLocale(db: Executor, siteId: string, input: string | undefined): Promise<string> {
  if (input === undefined || input === '') return (await getSiteLocales(db, siteId)).defaultLocale;
  const canonical = canonicalLocale(input);
  if (!canonical) throw invalid('LOCALE_INVALID', 'locale');
  return canonical;
}

async function getRow(db: Executor, siteId: string, slug: string, locale: string | undefined, audience: Audience = 'all'): Promise<SiteBlockRow> {
  const row = await repo.findBySlug(db, siteId, await addressedLocale(db, siteId, locale), slug);
  if (!row || (audience === 'published' && row.status !== 'published')) throw notFound('site block');
  return row;
}

/** The row a write transaction changes, locked until it commits (two edits of one block never overwrite each other). */
async function rowForWrite(tx: Executor, siteId: string, slug: string, locale: string | undefined): Promise<SiteBlockRow> {
  const row = await repo.findBySlug(tx, siteId, await addressedLocale(tx, siteId, locale), slug, true);
  if (!row) throw notFound('site block');
  return row;
}

const schemaOf = (v: unknown) => parseJson<FieldDefinition[]>(v, []);
const dataOf = (v: unknown) => parseJson<Data>(v, {});

/**
 * What a reader sees: management the working schema and data; delivery tokens and public reads
 * the published snapshot when staged publishing holds one. dataSource fields resolved.
 */
async function detail(db: Executor, siteId: string, row: SiteBlockRow, audience: Audience) {
  const snapshot = audience === 'published' ? parseJson<{ schema: FieldDefinition[]; data: Data } | null>(row.published_snapshot, null) : null;
  const schema = snapshot?.schema ?? schemaOf(row.schema);
  const data = await resolveDataSources(db, siteId, schema, snapshot?.data ?? dataOf(row.data), audience);
  return { ...siteBlockFields.toApi(row), schema, data, ...(audience === 'published' ? { hasUnpublishedChanges: false } : {}) };
}

export function eventData(r: SiteBlockRow) {
  return { id: Number(r.id), name: r.name, slug: r.slug, type: r.type, path: r.path, locale: r.locale, status: r.status, publishedAt: r.published_at };
}

/**
 * With staged publishing, the first edit of a published block keeps what was published as its
 * snapshot (delivery reads serve it until the next publish) and marks the block as changed.
 */
function stagedEdit(staged: boolean, row: SiteBlockRow) {
  if (!staged || row.status !== 'published') return {};
  const snapshot = row.published_snapshot === null ? { published_snapshot: toJson({ schema: schemaOf(row.schema), data: dataOf(row.data) }) } : {};
  return { ...snapshot, has_unpublished_changes: true };
}

// ------------------------------------------------------------------------------------------------
// Reads

export function listBlocks(db: Executor, auth: Auth, query: Static<typeof SiteBlockListQuery>) {
  return listSiteBlocks(db, auth.siteId, query, audienceOf(auth));
}

export async function getBlock(db: Executor, siteId: string, slug: string, locale: string | undefined, audience: Audience) {
  return detail(db, siteId, await getRow(db, siteId, slug, locale, audience), audience);
}

/**
 * The page block a front end's route names: `/about` in `locale` (default: the site's default),
 * or, without `locale`, `/de/about` read as `/about` in `de` when `de` is an enabled locale.
 */
export async function getBlockByPath(db: Executor, siteId: string, rawPath: string, localeInput: string | undefined, audience: Audience) {
  const locales = await getSiteLocales(db, siteId);
  let locale = localeInput ? canonicalLocale(localeInput) : locales.defaultLocale;
  if (!locale) throw invalid('LOCALE_INVALID', 'locale');
  const path = normalizePath(rawPath);
  if (!localeInput) {
    const [first, ...rest] = path.slice(1).split('/');
    const prefixed = locales.enabledLocales.find((l) => l.toLowerCase() === first?.toLowerCase());
    if (prefixed) {
      const row = await repo.findByPath(db, siteId, prefixed, `/${rest.join('/')}`);
      if (row && (audience === 'all' || row.status === 'published')) return detail(db, siteId, row, audience);
    }
    locale = locales.defaultLocale;
  }
  const row = await repo.findByPath(db, siteId, locale, path);
  if (!row || (audience === 'published' && row.status !== 'published')) throw notFound('page block');
  return detail(db, siteId, row, audience);
}

// ------------------------------------------------------------------------------------------------
// Writes

export async function createBlock(db: Db, auth: Auth, input: Static<typeof SiteBlockCreate>) {
  const siteId = auth.siteId;
  const locale = resolveLocale(await getSiteLocales(db, siteId), input.locale);
  const name = input.name.trim();
  if (!name) throw invalid('VALIDATION_FAILED', 'name', 'must not be empty');
  if (input.slug && RESERVED_SLUGS.has(input.slug)) throw invalid('SLUG_TAKEN', 'slug', `"${input.slug}" is reserved.`);
  const path = typedPath(input.type, input.path);
  const schema = parseSchema(input.schema ?? []);
  return retryLostSlug(!input.slug, () => insertBlock(db, siteId, locale, name, path, schema, input));
}

/** createBlock's transaction (run again when a generated slug lost a race, decisions HR2). */
function insertBlock(
  db: Db,
  siteId: string,
  locale: string,
  name: string,
  path: string | null,
  schema: ReturnType<typeof parseSchema>,
  input: Static<typeof SiteBlockCreate>,
) {
  return db.transaction().execute(async (tx) => {
    if (input.slug && (await slugsInLocale(tx, 'site_blocks', siteId, locale, [input.slug])).size) {
      throw invalid('SLUG_TAKEN', 'slug', `The slug "${input.slug}" is already used in ${locale}.`);
    }
    await assertPathFree(tx, siteId, locale, path);
    if (input.translationGroup) await assertLocaleFree(tx, 'site_blocks', siteId, input.translationGroup, locale);
    const at = now();
    const id = await repo.siteBlocksTable.insert(tx, {
      site_id: siteId,
      name,
      slug: input.slug ?? (await freeSlug(tx, siteId, locale, slugify(name) || 'block')),
      type: input.type,
      status: 'draft',
      path,
      locale,
      translation_group: input.translationGroup ?? newTranslationGroup(),
      schema: toJson(schema),
      data: '{}',
      created_at: at,
      updated_at: at,
    });
    const row = (await repo.siteBlocksTable.find(tx, siteId, { id })) as SiteBlockRow;
    return detail(tx, siteId, row, 'all');
  });
}

/** Name, type and path (the slug is permanent: the same slug is accepted). */
export async function updateBlock(db: Db, auth: Auth, slug: string, locale: string | undefined, input: Static<typeof SiteBlockUpdate>) {
  return db.transaction().execute(async (tx) => {
    const row = await rowForWrite(tx, auth.siteId, slug, locale);
    if (input.slug !== undefined && input.slug !== row.slug) throw invalid('VALIDATION_FAILED', 'slug', 'The slug of a site block cannot change.');
    const name = input.name?.trim();
    if (name === '') throw invalid('VALIDATION_FAILED', 'name', 'must not be empty');
    const type = input.type ?? row.type;
    // A block that becomes global drops its path; one that stays a page keeps it unless a new one is sent.
    const path = typedPath(type, input.path !== undefined ? input.path : type === 'global' && input.path === undefined ? null : row.path);
    await assertPathFree(tx, auth.siteId, row.locale, path, Number(row.id));
    await repo.siteBlocksTable.update(tx, auth.siteId, { id: Number(row.id) }, { name, type, path, updated_at: now() });
    return detail(tx, auth.siteId, (await repo.findBySlug(tx, auth.siteId, row.locale, slug))!, 'all');
  });
}

export async function deleteBlock(db: Db, auth: Auth, slug: string, locale: string | undefined) {
  const row = await getRow(db, auth.siteId, slug, locale);
  // The revisions go with it (foreign key, on delete cascade).
  if (!(await repo.siteBlocksTable.delete(db, auth.siteId, { id: Number(row.id) }))) throw notFound('site block');
}

/** A new schema; the data is kept as it is (fields no longer named are orphans: readable, not validated). */
export async function putSchema(db: Db, auth: Auth, slug: string, locale: string | undefined, input: unknown) {
  const schema = parseSchema(input);
  return db.transaction().execute(async (tx) => {
    const row = await rowForWrite(tx, auth.siteId, slug, locale);
    const staged = await repo.stagedPublishing(tx, auth.siteId);
    const changed = toJson(schema) !== toJson(schemaOf(row.schema));
    await repo.siteBlocksTable.update(
      tx,
      auth.siteId,
      { id: Number(row.id) },
      { schema: toJson(schema), ...(changed ? stagedEdit(staged, row) : {}), updated_at: now() },
    );
    return detail(tx, auth.siteId, (await repo.findBySlug(tx, auth.siteId, row.locale, slug))!, 'all');
  });
}

async function writeData(tx: Executor, auth: Auth, row: SiteBlockRow, data: Data, action: 'update' | 'restore'): Promise<boolean> {
  const before = dataOf(row.data);
  const changes = fieldChanges(before, data);
  if (!changes.length) return false;
  checkData(schemaOf(row.schema), data);
  const at = now();
  const staged = await repo.stagedPublishing(tx, auth.siteId);
  const json = toJson(data);
  await repo.siteBlocksTable.update(tx, auth.siteId, { id: Number(row.id) }, { data: json, ...stagedEdit(staged, row), updated_at: at });
  // The files its image and file fields (or any text in it) use (decisions M15).
  await setMediaReferences(tx, auth.siteId, { siteBlockId: Number(row.id) }, { data: json });
  await setOutboundLinks(tx, auth.siteId, { siteBlockId: Number(row.id) }, json);
  await repo.revisions.record(tx, {
    siteId: auth.siteId,
    ownerId: Number(row.id),
    authorId: auth.userId || null,
    action,
    changes,
    snapshot: toJson({ data }),
    at,
  });
  return true;
}

/**
 * Only the changed fields are sent; the merged result is validated against the schema (paths like
 * `data.hero.title`) and, when something changed, written with a revision listing only the
 * changes. A PUT that changes nothing writes nothing.
 */
export async function putData(db: Db, auth: Auth, slug: string, locale: string | undefined, patch: Data) {
  return db.transaction().execute(async (tx) => {
    const row = await rowForWrite(tx, auth.siteId, slug, locale);
    await writeData(tx, auth, row, mergeData(dataOf(row.data), patch), 'update');
    return detail(tx, auth.siteId, (await repo.findBySlug(tx, auth.siteId, row.locale, slug))!, 'all');
  });
}

/**
 * Published: visible to delivery tokens and public reads. With staged publishing this is also how
 * edits go live (the snapshot is taken again). The event fires when something became visible.
 */
export async function publishBlock(db: Db, auth: Auth, slug: string, locale: string | undefined) {
  return db.transaction().execute(async (tx) => {
    const row = await rowForWrite(tx, auth.siteId, slug, locale);
    const staged = await repo.stagedPublishing(tx, auth.siteId);
    const visibleChange = row.status !== 'published' || Boolean(row.has_unpublished_changes);
    const at = now();
    await repo.siteBlocksTable.update(
      tx,
      auth.siteId,
      { id: Number(row.id) },
      {
        status: 'published',
        published_snapshot: staged ? toJson({ schema: schemaOf(row.schema), data: dataOf(row.data) }) : null,
        has_unpublished_changes: false,
        ...(visibleChange ? { published_at: at, updated_at: at } : {}),
      },
    );
    const updated = (await repo.findBySlug(tx, auth.siteId, row.locale, slug))!;
    if (visibleChange) await emitEvent(tx, auth.siteId, 'site_block.published', eventData(updated), at);
    return detail(tx, auth.siteId, updated, 'all');
  });
}

export async function unpublishBlock(db: Db, auth: Auth, slug: string, locale: string | undefined) {
  return db.transaction().execute(async (tx) => {
    const row = await rowForWrite(tx, auth.siteId, slug, locale);
    const at = now();
    if (row.status === 'published') {
      await repo.siteBlocksTable.update(
        tx,
        auth.siteId,
        { id: Number(row.id) },
        { status: 'draft', published_snapshot: null, has_unpublished_changes: false, updated_at: at },
      );
    }
    const updated = (await repo.findBySlug(tx, auth.siteId, row.locale, slug))!;
    if (row.status === 'published') await emitEvent(tx, auth.siteId, 'site_block.unpublished', eventData(updated), at);
    return detail(tx, auth.siteId, updated, 'all');
  });
}

// ------------------------------------------------------------------------------------------------
// Revisions

function siteBlockRevision(r: RevisionRow) {
  return { id: r.id, siteBlockId: r.ownerId, action: r.action, changes: r.changes as FieldChange[], author: r.author, createdAt: r.createdAt };
}

export async function listRevisions(db: Executor, auth: Auth, slug: string, query: { locale?: string; page: number; limit: number }) {
  const row = await getRow(db, auth.siteId, slug, query.locale);
  const { rows, total } = await repo.revisions.list(db, auth.siteId, Number(row.id), query);
  return { data: rows.map(siteBlockRevision), meta: pageMeta(total, query.page, query.limit) };
}

/** The data as it was after that revision, written as a new revision; the status stays. */
export async function restoreRevision(db: Db, auth: Auth, slug: string, locale: string | undefined, revisionId: number) {
  return db.transaction().execute(async (tx) => {
    const row = await rowForWrite(tx, auth.siteId, slug, locale);
    const revision = await repo.revisions.find(tx, auth.siteId, Number(row.id), revisionId);
    if (!revision) throw new AppError('REVISION_NOT_FOUND');
    const { data } = parseJson<{ data: Data }>(revision.snapshot, { data: {} });
    await writeData(tx, auth, row, data, 'restore');
    return detail(tx, auth.siteId, (await repo.findBySlug(tx, auth.siteId, row.locale, slug))!, 'all');
  });
}

// ------------------------------------------------------------------------------------------------
// Translations (decisions G10)

/** Compared: the name and every data field the source fills; a member not published where the source is, is partial. */
export async function translations(db: Executor, auth: Auth, slug: string, locale: string | undefined) {
  const row = await getRow(db, auth.siteId, slug, locale);
  const { enabledLocales } = await getSiteLocales(db, auth.siteId);
  const members = await groupMembers<SiteBlockRow>(db, 'site_blocks', auth.siteId, row.translation_group);
  const member = (r: SiteBlockRow) => {
    const fields: Data = { name: r.name };
    for (const [k, v] of Object.entries(dataOf(r.data))) fields[`data.${k}`] = v;
    return { locale: r.locale, fields, published: r.status === 'published' };
  };
  return translationStatus(member(row), members.map(member), enabledLocales);
}

/** A draft copy in the target locale with the same schema and data; 409 when the group has that locale. */
export async function copyToLocale(db: Db, auth: Auth, slug: string, locale: string | undefined, body: { targetLocale?: string; locale?: string }) {
  const target = copyTargetLocale(await getSiteLocales(db, auth.siteId), body);
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, auth.siteId, slug, locale);
    await assertLocaleFree(tx, 'site_blocks', auth.siteId, row.translation_group, target);
    await assertPathFree(tx, auth.siteId, target, row.path);
    const at = now();
    const id = await repo.siteBlocksTable.insert(tx, {
      site_id: auth.siteId,
      name: row.name,
      slug: await freeSlug(tx, auth.siteId, target, row.slug),
      type: row.type,
      status: 'draft',
      path: row.path,
      locale: target,
      translation_group: row.translation_group,
      schema: toJson(schemaOf(row.schema)),
      data: toJson(dataOf(row.data)),
      created_at: at,
      updated_at: at,
    });
    await setMediaReferences(tx, auth.siteId, { siteBlockId: id }, { data: toJson(dataOf(row.data)) });
    await setOutboundLinks(tx, auth.siteId, { siteBlockId: id }, toJson(dataOf(row.data)));
    return detail(tx, auth.siteId, (await repo.siteBlocksTable.find(tx, auth.siteId, { id })) as SiteBlockRow, 'all');
  });
}

// ------------------------------------------------------------------------------------------------
// Settings

export async function getSettings(db: Executor, siteId: string) {
  return { stagedPublishing: await repo.stagedPublishing(db, siteId) };
}

/** Turning staged publishing off makes every block's working data live at once (the snapshots go). */
export async function putSettings(db: Db, siteId: string, input: { stagedPublishing: boolean }) {
  return db.transaction().execute(async (tx) => {
    const at = now();
    await repo.saveSettings(tx, siteId, input.stagedPublishing, at);
    if (!input.stagedPublishing) await repo.dropSnapshots(tx, siteId, at);
    return getSettings(tx, siteId);
  });
}
