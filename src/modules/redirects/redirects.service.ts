import type { Db } from '../../db/types.js';
import type { ApiOf } from '../../kit/fields.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { dateBound, type ListQuery, paginate, pageMeta } from '../../shared/pagination.js';
import { SLICE_MS, timeSlicer } from '../../shared/time-slice.js';
import { type RedirectSettings, loadSiteRules, settingsOf } from './redirects.cache.js';
import { missHash, type Visitor } from './redirects.hits.js';
import * as repo from './redirects.repository.js';
import { asRule, type RedirectsContext, type RuleInput, redirectFields, redirects } from './redirects.resource.js';
import { checkChain, checkRule, exactKey, sourceHash, splitPath } from './redirects.rules.js';

export type Redirect = ApiOf<typeof redirectFields.fields>;
type Row = Record<string, any>;

const now = () => new Date().toISOString();

export async function toggleRedirect(ctx: RedirectsContext, siteId: string, id: number): Promise<Redirect> {
  const stored = await redirects.service.getRow(ctx.db, siteId, id);
  return redirects.service.update(ctx.db, siteId, id, { isActive: !stored.is_active }, ctx);
}

export async function bulkDeleteRedirects(ctx: RedirectsContext, siteId: string, ids: readonly number[]): Promise<number> {
  const deleted = await repo.bulkDelete(ctx.db, siteId, [...new Set(ids)]);
  ctx.cache.forget(siteId);
  return deleted;
}

export async function redirectStats(ctx: RedirectsContext, siteId: string) {
  await ctx.hits.flush();
  return repo.stats(ctx.db, siteId);
}

/** `GET /redirects/match`: the rule a path would take, never counted (decisions R1). */
export async function matchRedirect(ctx: RedirectsContext, siteId: string, path: string): Promise<Redirect> {
  const { rules } = await ctx.cache.get(siteId);
  const m = rules.match(path);
  if (!m) throw notFound('redirect for this path');
  return redirects.service.get(ctx.db, siteId, m.rule.id, false, ctx);
}

/**
 * Resolve (decisions R2): the target with captures and query applied, the hit counted and
 * logged; a miss is counted in the 404 log. Memory only: no query, no write on the request's path.
 */
export async function resolveRedirect(ctx: RedirectsContext, siteId: string, path: string, visitor: Visitor) {
  const site = await ctx.cache.get(siteId);
  const m = site.rules.match(path);
  if (!m) {
    ctx.hits.miss(siteId, exactKey(splitPath(path).path), visitor.referrer);
    throw notFound('redirect for this path');
  }
  ctx.hits.hit(siteId, m.rule.id, visitor, site.settings.anonymizeIp);
  return { redirectId: m.rule.id, targetUrl: m.targetUrl, statusCode: m.rule.statusCode };
}

export async function listLogs(ctx: RedirectsContext, siteId: string, id: number, query: ListQuery) {
  await ctx.hits.flush();
  await redirects.service.getRow(ctx.db, siteId, id);
  let base = repo.listLogs(ctx.db, siteId, id);
  if (query.dateFrom) base = base.where('created_at', '>=', dateBound(query.dateFrom, false));
  if (query.dateTo) base = base.where('created_at', '<=', dateBound(query.dateTo, true));
  const order = query.sortOrder ?? 'desc';
  const { rows, total } = await paginate(base, query, (qb) => qb.orderBy('id', order));
  return {
    data: rows.map((r) => ({
      id: Number(r.id),
      redirectId: Number(r.redirect_id),
      referrer: r.referrer,
      userAgent: r.user_agent,
      ipAddress: r.ip_address,
      createdAt: r.created_at,
    })),
    meta: pageMeta(total, query.page, query.limit),
  };
}

const missToApi = (r: Row) => ({
  id: Number(r.id),
  path: r.path as string,
  hits: Number(r.hits),
  lastReferrer: r.last_referrer as string | null,
  firstSeenAt: r.first_seen_at as string,
  lastSeenAt: r.last_seen_at as string,
});

/** The 404 log, most frequent first (decisions R2). */
export async function listMisses(ctx: RedirectsContext, siteId: string, query: ListQuery & { search?: string }) {
  await ctx.hits.flush();
  let base = repo.listMisses(ctx.db, siteId, query.search);
  if (query.dateFrom) base = base.where('first_seen_at', '>=', dateBound(query.dateFrom, false));
  if (query.dateTo) base = base.where('first_seen_at', '<=', dateBound(query.dateTo, true));
  const sort = (query.sortBy ?? 'hits') as 'hits' | 'last_seen_at' | 'first_seen_at';
  const order = query.sortOrder ?? 'desc';
  const { rows, total } = await paginate(base, query, (qb) => qb.orderBy(sort, order).orderBy('id', order));
  return { data: rows.map(missToApi), meta: pageMeta(total, query.page, query.limit) };
}

/** Turns a 404 log entry into an exact redirect from its path; the entry leaves the log. */
export async function redirectMiss(ctx: RedirectsContext, siteId: string, missId: number, input: Omit<RuleInput, 'sourcePath' | 'isRegex'>): Promise<Redirect> {
  await ctx.hits.flush();
  const miss = await repo.findMiss(ctx.db, siteId, missId);
  if (!miss) throw notFound('404 log entry');
  return redirects.service.create(ctx.db, siteId, { ...input, sourcePath: miss.path, isRegex: false }, ctx);
}

export async function deleteMiss(ctx: RedirectsContext, siteId: string, missId: number): Promise<void> {
  await ctx.hits.flush();
  if (!(await repo.deleteMiss(ctx.db, siteId, missId))) throw notFound('404 log entry');
}

// ---- URL changes of published contents (decisions R11) ----

/**
 * When the site asks for it (`redirectOnSlugChange`), a published content that moved from
 * `from` to `to` gets a 301 from its old path: the new path stops redirecting (it is live
 * again, e.g. a slug changed back), rules that led to the old path now lead to the new one (no
 * chain grows), and a rule from the old path is replaced. Answers whether anything changed.
 */
export async function redirectMovedContent(db: Db, siteId: string, from: string, to: string): Promise<boolean> {
  const site = await repo.siteContext(db, siteId);
  if (!site || !settingsOf(site).redirectOnSlugChange) return false;
  await db.transaction().execute(async (trx) => {
    const at = now();
    await repo.deleteBySourceHash(trx, siteId, sourceHash(to, false));
    await repo.retarget(trx, siteId, from, to, at);
    const hash = sourceHash(from, false);
    await repo.deleteBySourceHash(trx, siteId, hash);
    await redirects.repo.insert(trx, {
      ...redirectFields.insertRow({ sourcePath: from, targetUrl: to, statusCode: 301, note: 'Created when the content moved (slug change)' }),
      site_id: siteId,
      source_hash: hash,
      created_at: at,
      updated_at: at,
    });
    await repo.deleteMissByHash(trx, siteId, missHash(exactKey(from)));
  });
  return true;
}

// ---- settings (decisions R8, R9) ----

export async function getSettings(ctx: RedirectsContext, siteId: string): Promise<RedirectSettings> {
  return settingsOf(await repo.siteContext(ctx.db, siteId));
}

export async function updateSettings(ctx: RedirectsContext, siteId: string, input: Partial<RedirectSettings>): Promise<RedirectSettings> {
  const merged = { ...(await getSettings(ctx, siteId)), ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) } as RedirectSettings;
  await repo.upsertSettings(ctx.db, {
    site_id: siteId,
    log_retention_days: merged.logRetentionDays,
    anonymize_ip: merged.anonymizeIp,
    redirect_on_slug_change: merged.redirectOnSlugChange,
    updated_at: now(),
  });
  ctx.cache.forget(siteId);
  return merged;
}

// ---- import (decisions R1, R7) ----

/** Rows an import may hold; errors listed at most. */
export const MAX_IMPORT_ROWS = 10_000;
export const MAX_IMPORT_ERRORS = 1000;

export interface ImportResult {
  imported: number;
  skipped: number;
  errors: Array<{ row: number; field?: string; message: string }>;
  errorCount: number;
}

type ImportEntries = Array<{ row: number; input: RuleInput } | { row: number; error: { field?: string; message: string } }>;

/** What an import stores and reports, checked against the site's rules as one executor sees them. */
interface ImportPlan {
  result: ImportResult;
  rows: Array<Omit<Row, 'created_at' | 'updated_at'>>;
}

/**
 * Tests change the site's rules here, between the check before the transaction and the
 * transaction, to show the import then checks again (decisions HN17). Nothing else sets it.
 */
export const importSeams: { afterCheck: (() => Promise<void>) | null } = { afterCheck: null };

/**
 * Imports rules in one transaction: each row is checked like a create (fields, pattern, loops
 * and chains against the site's rules and the rows before it); a bad row is named by its row
 * number and left out whole, a duplicate source path (on the site or earlier in the file) is
 * skipped, and the rest is stored. Rows are numbered from 1 (the CSV header is row 0).
 *
 * The checks run before the transaction (decisions HN17): reading and compiling a large site's
 * rules took seconds, all of it holding SQLite's one writer, so every other site's writes waited.
 * The site's rules version, read before and after them and again (locked) in the transaction,
 * says whether they still hold; when it moved, the transaction checks again with what it sees.
 */
export async function importRedirects(ctx: RedirectsContext, siteId: string, entries: ImportEntries): Promise<ImportResult> {
  if (entries.length > MAX_IMPORT_ROWS) {
    throw invalid('VALIDATION_FAILED', 'entries', `An import holds at most ${MAX_IMPORT_ROWS} rows; split the file.`);
  }
  // 9,000 rows of checks held the event loop about 700 ms in one piece: every step gives the
  // loop a turn once its slice is used up (decisions HN6, HN7).
  const slice = timeSlicer();
  const hashes: Array<string | undefined> = [];
  for (const e of entries) {
    await slice();
    hashes.push('input' in e ? sourceHash(e.input.sourcePath, e.input.isRegex ?? false) : undefined);
  }
  await repo.ensureRulesVersion(ctx.db, siteId);
  const versionBefore = await repo.rulesVersion(ctx.db, siteId);
  const checked = await planImport(ctx.db, siteId, entries, hashes, false);
  const checkedAt = (await repo.rulesVersion(ctx.db, siteId)) === versionBefore ? versionBefore : null;
  await importSeams.afterCheck?.();
  const result = await ctx.db.transaction().execute(async (trx) => {
    const version = await repo.lockRulesVersion(trx, siteId);
    const plan = version === checkedAt ? checked : await planImport(trx, siteId, entries, hashes, true);
    // The writer is held from here on: paced as such (decisions HN16).
    const insertSlice = timeSlicer(SLICE_MS, true);
    const at = now();
    // 100 rules a statement: about 1 ms each, 2-7 ms at 200 on a busy machine (decisions HN11).
    for (let i = 0; i < plan.rows.length; i += 100) {
      await insertSlice();
      await repo.insertMany(trx, plan.rows.slice(i, i + 100).map((r) => ({ ...r, created_at: at, updated_at: at })) as never);
    }
    plan.result.imported = plan.rows.length;
    return plan.result;
  });
  if (result.imported) ctx.cache.forget(siteId);
  return result;
}

/** The import's checks against the site's rules as `db` sees them (`holdsWriter`: inside the transaction). */
async function planImport(db: Db, siteId: string, entries: ImportEntries, hashes: Array<string | undefined>, holdsWriter: boolean): Promise<ImportPlan> {
  const result: ImportResult = { imported: 0, skipped: 0, errors: [], errorCount: 0 };
  const fail = (row: number, field: string | undefined, message: string) => {
    result.errorCount += 1;
    if (result.errors.length < MAX_IMPORT_ERRORS) result.errors.push({ row, ...(field ? { field } : {}), message });
  };
  const slice = timeSlicer(SLICE_MS, holdsWriter);
  const site = await loadSiteRules(db, siteId, true);
  const taken = await redirects.repo.takenValues(
    db,
    siteId,
    'source_hash',
    hashes.filter((h) => h !== undefined),
  );
  const rows: ImportPlan['rows'] = [];
  let nextId = -1;
  for (const [index, entry] of entries.entries()) {
    await slice();
    if ('error' in entry) {
      fail(entry.row, entry.error.field, entry.error.message);
      continue;
    }
    const input = entry.input;
    const hash = hashes[index]!;
    if (taken.has(hash)) {
      result.skipped += 1;
      continue;
    }
    try {
      checkRule({ sourcePath: input.sourcePath, targetUrl: input.targetUrl, isRegex: input.isRegex ?? false });
      if (input.isActive !== false) {
        // Provisional negative ids: rows before this one count in its loop check.
        const candidate = asRule(nextId--, input);
        site.rules.add(candidate);
        try {
          checkChain(site.rules, candidate, site.domain);
        } catch (err) {
          site.rules.delete(candidate);
          throw err;
        }
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const field = err.errors ? Object.keys(err.errors)[0] : undefined;
      fail(entry.row, field, err.message);
      continue;
    }
    taken.add(hash);
    rows.push({ ...redirectFields.insertRow(input), site_id: siteId, source_hash: hash });
  }
  return { result, rows };
}

// ---- export (decisions F2, R7) ----

export const EXPORT_COLUMNS = ['source_path', 'target_url', 'status_code', 'is_regex', 'is_active', 'hit_count'] as const;

/** The site's rules by id, in batches, for a streamed export (with this instance's pending hits counted). */
export async function* exportRows(ctx: RedirectsContext, siteId: string) {
  await ctx.hits.flush();
  let after = 0;
  for (;;) {
    const rows = await repo.exportBatch(ctx.db, siteId, after, 1000);
    if (!rows.length) return;
    for (const r of rows) {
      yield {
        sourcePath: r.source_path,
        targetUrl: r.target_url,
        statusCode: Number(r.status_code),
        isRegex: Boolean(r.is_regex),
        isActive: Boolean(r.is_active),
        preserveQueryString: Boolean(r.preserve_query_string),
        hitCount: Number(r.hit_count),
      };
    }
    after = Number(rows[rows.length - 1]!.id);
  }
}
