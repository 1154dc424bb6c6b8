import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/types.js';
import type { DialectName } from '../../db/connect.js';
import { now } from '../../db/json.js';
import { invalid, notFound } from '../../shared/errors.js';
import { findFreeSlug, slugify, slugsInLocale } from '../../shared/slug.js';
import { pageMeta } from '../../shared/pagination.js';
import { getSiteLocales, resolveLocale } from '../sites/sites.service.js';
import { assertLocaleFree, copyTargetLocale, groupMembers, newTranslationGroup, translationStatus } from '../../shared/translations/index.js';
import * as repo from './tags.repository.js';
import { contentCountsByTag } from '../contents/contents.service.js';
import type { TagCreate, TagListQuery, TagUpdate } from './tags.schemas.js';

type TagRow = repo.TagRow;

function toTag(r: TagRow, contentCount: number) {
  return {
    id: Number(r.id),
    name: r.name,
    slug: r.slug,
    description: r.description,
    locale: r.locale,
    translationGroup: r.translation_group,
    contentCount,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

async function withCounts(db: Executor, siteId: string, rows: TagRow[]) {
  const counts = await contentCountsByTag(
    db,
    siteId,
    rows.map((r) => Number(r.id)),
  );
  return rows.map((r) => toTag(r, counts.get(Number(r.id)) ?? 0));
}

async function getRow(db: Executor, siteId: string, id: number): Promise<TagRow> {
  const row = await repo.findTag(db, siteId, id);
  if (!row) throw notFound('tag');
  return row;
}

/** Names and slugs are unique per site and locale (spec "Tag"; decisions G17). */
async function assertUnique(db: Executor, siteId: string, locale: string, name: string | undefined, slug: string | undefined, exceptId?: number) {
  const clashes = await repo.findClash(db, siteId, locale, name, slug, exceptId);
  if (name && clashes.some((c) => c.name === name)) throw invalid('NAME_TAKEN', 'name', `A tag named "${name}" already exists in ${locale}.`);
  if (slug && clashes.some((c) => c.slug === slug)) throw invalid('SLUG_TAKEN', 'slug', `The slug "${slug}" is already used in ${locale}.`);
}

export async function listTags(db: Executor, dialect: DialectName, siteId: string, query: Static<typeof TagListQuery>) {
  const { rows, total } = await repo.listTags(db, dialect, siteId, query);
  return { data: await withCounts(db, siteId, rows), meta: pageMeta(total, query.page, query.limit) };
}

export async function getTag(db: Executor, siteId: string, id: number) {
  const [tag] = await withCounts(db, siteId, [await getRow(db, siteId, id)]);
  return tag!;
}

export async function createTag(db: Db, siteId: string, input: Static<typeof TagCreate>) {
  const locales = await getSiteLocales(db, siteId);
  const locale = resolveLocale(locales, input.locale);
  const name = input.name.trim();
  return db.transaction().execute(async (tx) => {
    let slug = input.slug;
    if (slug) await assertUnique(tx, siteId, locale, name, slug);
    else {
      await assertUnique(tx, siteId, locale, name, undefined);
      const base = slugify(name) || 'tag';
      slug = await findFreeSlug(base, (c) => slugsInLocale(tx, 'tags', siteId, locale, c));
    }
    let group = input.translationGroup;
    if (group) await assertLocaleFree(tx, 'tags', siteId, group, locale);
    else group = newTranslationGroup();
    const at = now();
    const id = await repo.insertTag(tx, {
      site_id: siteId,
      name,
      slug,
      description: input.description ?? null,
      locale,
      translation_group: group,
      created_at: at,
      updated_at: at,
    });
    return getTag(tx, siteId, id);
  });
}

export async function updateTag(db: Db, siteId: string, id: number, input: Static<typeof TagUpdate>) {
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    const name = input.name?.trim();
    await assertUnique(tx, siteId, row.locale, name !== row.name ? name : undefined, input.slug !== row.slug ? input.slug : undefined, id);
    await repo.updateTag(tx, siteId, id, { name, slug: input.slug, description: input.description, updated_at: now() });
    return getTag(tx, siteId, id);
  });
}

/** Deleting a tag removes its links; the contents stay (spec "DELETE /tags/:id"). */
export async function deleteTag(db: Db, siteId: string, id: number) {
  if (!(await repo.deleteTag(db, siteId, id))) throw notFound('tag');
}

export async function tagTranslations(db: Executor, siteId: string, id: number) {
  const row = await getRow(db, siteId, id);
  const { enabledLocales } = await getSiteLocales(db, siteId);
  const members = await groupMembers<TagRow>(db, 'tags', siteId, row.translation_group);
  const fields = (r: TagRow) => ({ name: r.name, description: r.description });
  return translationStatus(
    { locale: row.locale, fields: fields(row) },
    members.map((m) => ({ locale: m.locale, fields: fields(m) })),
    enabledLocales,
  );
}

/** A copy in the target locale, in the same group; 409 when that locale has a member (decisions G10). */
export async function copyTagToLocale(db: Db, siteId: string, id: number, body: { targetLocale?: string; locale?: string }) {
  const locales = await getSiteLocales(db, siteId);
  const target = copyTargetLocale(locales, body);
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    await assertLocaleFree(tx, 'tags', siteId, row.translation_group, target);
    const taken = await repo.findClash(tx, siteId, target, row.name, row.slug);
    const name = taken.some((c) => c.name === row.name) ? `${row.name} (${target})` : row.name;
    const slug = await findFreeSlug(row.slug, (c) => slugsInLocale(tx, 'tags', siteId, target, c));
    const at = now();
    const newId = await repo.insertTag(tx, {
      site_id: siteId,
      name,
      slug,
      description: row.description,
      locale: target,
      translation_group: row.translation_group,
      created_at: at,
      updated_at: at,
    });
    return getTag(tx, siteId, newId);
  });
}

/** For each tag, its translation in `locale` (those without one are left out). */
export async function translatedTagIds(db: Executor, siteId: string, ids: number[], locale: string): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const row = await repo.findTag(db, siteId, id);
    if (!row) continue;
    const t = (await groupMembers<TagRow>(db, 'tags', siteId, row.translation_group)).find((m) => m.locale === locale);
    if (t) out.push(Number(t.id));
  }
  return out;
}
