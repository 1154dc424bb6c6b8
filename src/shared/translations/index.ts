import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../db/types.js';
import { AppError, invalid } from '../errors.js';
import { resolveLocale, type SiteLocales } from '../site-locales.js';

/**
 * The translations engine (decisions G9, G10), shared by every translatable resource
 * (categories, tags, variables here; contents, forms and site blocks later). Each translatable
 * table has `site_id`, `locale` and `translation_group` (a UUID shared by the members of one
 * group, at most one per locale).
 */
export type TranslationState = 'complete' | 'missing' | 'partial';
export type TranslationStatusMap = Record<string, { status: TranslationState }>;

export interface TranslationMember {
  locale: string;
  /** The fields compared for completeness: a field filled in the source must be filled here. */
  fields: Record<string, unknown>;
  /** For resources with a publication state: whether this member is published. */
  published?: boolean;
}

export function newTranslationGroup(): string {
  return randomUUID();
}

function isFilled(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value as object).length > 0;
  return true;
}

/**
 * Status per enabled locale, seen from `source`: `missing` without a member, `partial` when a
 * field filled in the source is empty in the member or the member is unpublished where the
 * source is published, else `complete` (decisions G10).
 */
export function translationStatus(source: TranslationMember, members: TranslationMember[], enabledLocales: readonly string[]): TranslationStatusMap {
  const byLocale = new Map(members.map((m) => [m.locale, m]));
  byLocale.set(source.locale, source);
  const out: TranslationStatusMap = {};
  for (const locale of enabledLocales) {
    const member = byLocale.get(locale);
    if (!member) {
      out[locale] = { status: 'missing' };
      continue;
    }
    const emptied = Object.entries(source.fields).some(([k, v]) => isFilled(v) && !isFilled(member.fields[k]));
    const unpublished = source.published === true && member.published === false;
    out[locale] = { status: emptied || unpublished ? 'partial' : 'complete' };
  }
  return out;
}

/** The target of a copy-to-locale request: `targetLocale` or `locale`, enabled on the site. */
export function copyTargetLocale(locales: SiteLocales, body: { targetLocale?: string; locale?: string }): string {
  const given = body.targetLocale ?? body.locale;
  const field = body.targetLocale !== undefined ? 'targetLocale' : 'locale';
  if (!given) throw invalid('VALIDATION_FAILED', 'targetLocale', 'targetLocale (or locale) is required');
  return resolveLocale(locales, given, field);
}

type TranslatableTable = 'categories' | 'tags' | 'variables';

/** Members of a translation group on one site (one indexed query). */
export async function groupMembers<T extends Record<string, unknown>>(
  db: Executor,
  table: TranslatableTable | string,
  siteId: string,
  group: string,
): Promise<T[]> {
  const rows = await sql<T>`select * from ${sql.table(table)} where site_id = ${siteId} and translation_group = ${group}`.execute(db);
  return rows.rows;
}

/** 409 when the group already has a member in `locale` (decisions G10). */
export async function assertLocaleFree(db: Executor, table: TranslatableTable | string, siteId: string, group: string, locale: string): Promise<void> {
  const { rows } = await sql<{
    id: unknown;
  }>`select id from ${sql.table(table)} where site_id = ${siteId} and translation_group = ${group} and locale = ${locale} limit 1`.execute(db);
  if (rows.length) {
    throw new AppError('TRANSLATION_EXISTS', { message: `This record already has a translation in ${locale}.` });
  }
}

/** For each record, its translation in `locale`, in the order given (those without one are left out); one query. */
export async function translatedIds(
  db: Executor,
  table: TranslatableTable | string,
  siteId: string,
  ids: readonly number[],
  locale: string,
): Promise<number[]> {
  if (!ids.length) return [];
  const { rows } = await sql<{ source_id: unknown; id: unknown }>`
    select source.id as source_id, t.id as id
    from ${sql.table(table)} as source
    join ${sql.table(table)} as t on t.site_id = source.site_id and t.translation_group = source.translation_group
    where source.site_id = ${siteId} and source.id in (${sql.join(ids)}) and t.locale = ${locale}`.execute(db);
  const bySource = new Map(rows.map((r) => [Number(r.source_id), Number(r.id)]));
  return ids.flatMap((id) => (bySource.has(id) ? [bySource.get(id)!] : []));
}
