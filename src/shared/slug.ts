import type { Executor } from '../db/types.js';
import { classifyDbError } from '../db/db-errors.js';
import { prepared } from '../db/prepared.js';

/**
 * Slugs (decisions G17): generated from a name or title when omitted, transliterated to ASCII,
 * lower case, words joined by hyphens; `-2`, `-3`, ... on collision.
 */
const SPECIAL: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'ae',
  œ: 'oe',
  Œ: 'oe',
  ø: 'o',
  Ø: 'o',
  đ: 'd',
  Đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  Ł: 'l',
  ı: 'i',
  '&': ' and ',
};

export function slugify(input: string, maxLength = 255): string {
  const ascii = input
    .replace(/[ßæÆœŒøØđĐðþłŁı&]/g, (c) => SPECIAL[c] ?? c)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '');
  const slug = ascii
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/g, '');
  return slug;
}

export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

/** The first free slug among base, base-2, base-3, ... given the slugs already taken (seeding, bulk tools). */
export function nextFreeSlug(base: string, taken: ReadonlySet<string>, maxLength = 255): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, maxLength - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * The first free slug among base, base-2, base-3, ..., asking `taken` which of a batch of
 * candidates exist. An `IN (...)` of exact slugs uses the (site_id, locale, slug) index; a
 * `LIKE 'base-%'` cannot, and read every slug of the site on each create.
 */
export async function findFreeSlug(base: string, taken: (candidates: string[]) => Promise<Set<string>>, maxLength = 255): Promise<string> {
  const BATCH = 25;
  for (let start = 1; ; start += BATCH) {
    const candidates = Array.from({ length: BATCH }, (_, i) => {
      const n = start + i;
      if (n === 1) return base;
      const suffix = `-${n}`;
      return `${base.slice(0, maxLength - suffix.length).replace(/-+$/, '')}${suffix}`;
    });
    const used = await taken(candidates);
    const free = candidates.find((c) => !used.has(c));
    if (free) return free;
  }
}

/** Tries a create may take when its generated slug keeps losing races (ten at once need at most nine more). */
const SLUG_RACE_ATTEMPTS = 20;

/**
 * Runs a create (its whole transaction) again when the slug it generated lost a race: another
 * create committed the same free slug between this one's look-up and its insert, which
 * PostgreSQL reports as a unique violation once the other commits (SQLite's one writer at a
 * time never loses). The next try sees that slug taken and picks the next suffix (decisions
 * G17, HR2). A slug the client sent is never changed: its clash stays the 422 SLUG_TAKEN.
 */
export async function retryLostSlug<T>(generated: boolean, create: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (err) {
      const fault = classifyDbError(err);
      if (!generated || attempt >= SLUG_RACE_ATTEMPTS || fault?.kind !== 'unique' || fault.field !== 'slug') throw err;
    }
  }
}

/** Tables whose slugs are unique per site and locale, behind a (site_id, locale, slug) index. */
export type LocaleSlugTable = 'contents' | 'categories' | 'tags' | 'site_blocks';

// Prepared once per table and number of candidates (db/prepared.ts): every create without a slug runs it.
const slugsQuery = prepared(
  (db, p: { table: LocaleSlugTable; siteId: string; locale: string; candidates: string[] }) =>
    db
      .selectFrom(p.table as 'contents')
      .select('slug')
      .where('site_id', '=', p.siteId)
      .where('locale', '=', p.locale)
      .where('slug', 'in', p.candidates),
  { structural: ['table'] },
);

/** Which of these slugs the site already uses in the locale (one indexed lookup). */
export async function slugsInLocale(db: Executor, table: LocaleSlugTable, siteId: string, locale: string, candidates: string[]): Promise<Set<string>> {
  const rows = await slugsQuery.execute(db, { table, siteId, locale, candidates });
  return new Set(rows.map((r) => r.slug));
}

/** Whether a record other than `exceptId` uses the slug in the locale. */
export async function slugTakenInLocale(
  db: Executor,
  table: LocaleSlugTable,
  siteId: string,
  locale: string,
  slug: string,
  exceptId?: number,
): Promise<boolean> {
  let q = db
    .selectFrom(table as 'contents')
    .select('id')
    .where('site_id', '=', siteId)
    .where('locale', '=', locale)
    .where('slug', '=', slug);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}
