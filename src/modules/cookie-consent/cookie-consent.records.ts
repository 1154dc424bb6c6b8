import { Type, type Static } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Db, Executor } from '../../db/types.js';
import type { ListSpec } from '../../kit/repository.js';
import { listQueryFor } from '../../kit/repository.js';
import { csvLine } from '../../shared/csv.js';
import { AppError, notFound } from '../../shared/errors.js';
import { anonymizeIp } from '../../shared/ip.js';
import { canonicalLocale } from '../../shared/locales.js';
import { pageMeta } from '../../shared/pagination.js';
import { localDay, PeriodQueryProperties, resolvePeriod } from '../../shared/periods.js';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import { RETENTION_BATCH } from '../../jobs/retention.js';
import * as repo from './cookie-consent.repository.js';
import { settingsOf, type Settings } from './cookie-consent.settings.js';

/**
 * The public side and the proof (decisions CC3, CC4): the config a banner reads, the records of
 * visitors' choices (append-only, the address truncated), their logs, export and stats.
 */
export const ACTIONS = ['accept_all', 'reject_all', 'custom'] as const;
type Action = (typeof ACTIONS)[number];
const ActionSchema = Type.Unsafe<Action>({ type: 'string', enum: [...ACTIONS], description: ACTIONS.join(', ') });

// ------------------------------------------------------------------------------------------------
// The banner's config

async function siteRow(db: Executor, siteId: string): Promise<repo.SiteSettingsRow> {
  const row = await repo.findSiteSettings(db, siteId);
  if (!row) throw notFound('site');
  return row;
}

/** An enabled locale for `?locale=`: the exact tag, else its language, else the site's default. */
function bannerLocale(row: repo.SiteSettingsRow, requested: string | undefined): string {
  const enabled = parseJson<string[]>(row.enabled_locales, [row.default_locale]);
  const canonical = requested ? canonicalLocale(requested) : null;
  if (canonical && enabled.includes(canonical)) return canonical;
  const language = canonical?.split('-')[0];
  return language && enabled.includes(language) ? language : row.default_locale;
}

/** What the banner needs, in the visitor's locale; 404 while disabled. */
export async function publicConfig(db: Executor, siteId: string, requestedLocale?: string) {
  const row = await siteRow(db, siteId);
  const s = settingsOf(row);
  if (!s.enabled) throw notFound('cookie consent configuration');
  const locale = bannerLocale(row, requestedLocale);
  const t = s.translations[locale] ?? {};
  return {
    enabled: true,
    mode: s.mode,
    revision: s.revision,
    locale,
    showRejectAll: s.showRejectAll,
    showSettingsButton: s.showSettingsButton,
    position: s.position,
    layout: s.layout,
    theme: s.theme,
    primaryColor: s.primaryColor,
    borderRadius: s.borderRadius,
    fontSize: s.fontSize,
    styleOverrides: s.styleOverrides,
    texts: { ...s.texts, ...t.texts },
    categories: s.categories.map((c) => ({ ...c, ...t.categories?.[c.key] })),
    services: s.services.map((x) => ({ ...x, ...t.services?.[x.key] })),
    privacyPolicyUrl: s.privacyPolicyUrl,
    cookiePolicyUrl: s.cookiePolicyUrl,
  };
}

// ------------------------------------------------------------------------------------------------
// Records

export const RecordInput = Type.Object({
  consentId: Type.String({ format: 'uuid', description: "The banner's consent id (UUID)" }),
  categories: Type.Array(Type.String({ maxLength: 50 }), {
    maxItems: 50,
    description: 'The accepted category keys; unknown ones are dropped, required ones added',
  }),
  services: Type.Optional(
    Type.Record(Type.String({ maxLength: 50 }), Type.Array(Type.String({ maxLength: 50 }), { maxItems: 100 }), {
      maxProperties: 50,
      description: 'Accepted service keys per category',
    }),
  ),
  revision: Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'The settings revision the visitor saw' }),
  locale: Type.Optional(Nullable(Type.String({ maxLength: 35 }))),
  pageUrl: Type.Optional(Nullable(Type.String({ maxLength: 8192, description: 'Stored without its query string and fragment, at most 2,048 characters' }))),
});
type RecordInput = Static<typeof RecordInput>;

export const ConsentRecord = Type.Object({
  id: Type.Integer(),
  consentId: Type.String(),
  action: ActionSchema,
  categories: Type.Array(Type.String()),
  services: Type.Record(Type.String(), Type.Array(Type.String())),
  revision: Type.Integer(),
  locale: Nullable(Type.String()),
  pageUrl: Nullable(Type.String()),
  ipAddress: Nullable(Type.String({ description: 'Truncated: IPv4 last octet, IPv6 last 80 bits zeroed' })),
  userAgent: Nullable(Type.String()),
  createdAt: Timestamp,
});

export const PublicRecord = Type.Object({
  id: Type.Integer(),
  consentId: Type.String(),
  action: ActionSchema,
  categories: Type.Array(Type.String()),
  revision: Type.Integer(),
  createdAt: Timestamp,
});

export interface Visitor {
  ip: string | null;
  userAgent: string | null;
}

/**
 * The categories as the server keeps them (decisions CC3): configured ones only, required ones
 * always, in the configured order; and the action they amount to (notice-only: always accept_all).
 */
export function classify(s: Pick<Settings, 'mode' | 'categories'>, sent: readonly string[]): { categories: string[]; action: Action } {
  const wanted = new Set(sent);
  const categories = s.categories.filter((c) => c.required || wanted.has(c.key) || s.mode === 'notice-only').map((c) => c.key);
  const optional = s.categories.filter((c) => !c.required).length;
  const acceptedOptional = categories.length - (s.categories.length - optional);
  const action: Action = acceptedOptional === optional ? 'accept_all' : acceptedOptional === 0 ? 'reject_all' : 'custom';
  return { categories, action };
}

/** Accepted services of accepted categories, known ones only. */
function keptServices(s: Settings, categories: readonly string[], sent: RecordInput['services']): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const category of categories) {
    const known = new Set(s.services.filter((x) => x.category === category).map((x) => x.key));
    const kept = [...new Set(sent?.[category] ?? [])].filter((k) => known.has(k));
    if (kept.length) out[category] = kept;
  }
  return out;
}

const toRecord = (r: repo.ConsentRow) => ({
  id: Number(r.id),
  consentId: r.consent_id,
  action: r.action as Action,
  categories: r.categories ? r.categories.split(',') : [],
  services: parseJson<Record<string, string[]>>(r.services, {}),
  revision: Number(r.revision),
  locale: r.locale,
  pageUrl: r.page_url,
  ipAddress: r.ip_address,
  userAgent: r.user_agent,
  createdAt: r.created_at,
});

/** A visitor's choice, stored with its daily counts in one transaction; 409 while disabled. */
export async function record(db: Db, siteId: string, input: RecordInput, visitor: Visitor): Promise<Static<typeof PublicRecord>> {
  const row = await siteRow(db, siteId);
  const s = settingsOf(row);
  if (!s.enabled) throw new AppError('COOKIE_CONSENT_DISABLED');
  const { categories, action } = classify(s, input.categories);
  const at = now();
  const insert = {
    site_id: siteId,
    consent_id: input.consentId.toLowerCase(),
    action,
    categories: categories.join(','),
    services: toJson(keptServices(s, categories, input.services)),
    revision: input.revision,
    locale: input.locale ? canonicalLocale(input.locale) : null,
    page_url: input.pageUrl ? input.pageUrl.split(/[?#]/)[0]!.slice(0, 2048) : null,
    ip_address: visitor.ip ? anonymizeIp(visitor.ip) : null,
    user_agent: visitor.userAgent?.slice(0, 500) ?? null,
    created_at: at,
  };
  const day = localDay(new Date(at), row.timezone);
  const id = await db.transaction().execute(async (tx) => {
    const inserted = await repo.insertConsent(tx, insert);
    await repo.countDaily(tx, siteId, day, [`action:${action}`, ...categories.map((c) => `category:${c}`)]);
    return inserted;
  });
  return { id, consentId: insert.consent_id, action, categories, revision: input.revision, createdAt: at };
}

// ------------------------------------------------------------------------------------------------
// Logs and export (cookie_consent.logs, cookie_consent.export)

const ConsentFilterQuery = {
  action: Type.Optional(ActionSchema),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Records that accepted this category' })),
  consentId: Type.Optional(Type.String({ format: 'uuid' })),
  revision: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
};
const logList = {
  sort: ['created_at'],
  search: [],
  common: [],
  filters: ConsentFilterQuery,
  apply: (qb, query: repo.ConsentFilters) => repo.applyConsentFilters(qb, { ...query, dateFrom: undefined, dateTo: undefined }),
} satisfies ListSpec<any, any>;
export const LogQuery = listQueryFor(logList);
export const ExportQuery = Type.Object({
  ...ConsentFilterQuery,
  dateFrom: LogQuery.properties.dateFrom,
  dateTo: LogQuery.properties.dateTo,
});

export async function listLogs(db: Executor, siteId: string, query: Static<typeof LogQuery>) {
  const filters = { ...query, consentId: query.consentId?.toLowerCase() };
  const { rows, total } = await repo.consentsTable.list(db, siteId, filters, logList);
  return { data: (rows as repo.ConsentRow[]).map(toRecord), meta: pageMeta(total, query.page, query.limit) };
}

export const CSV_COLUMNS = ['created_at', 'consent_id', 'action', 'categories', 'revision', 'locale', 'page_url', 'ip_address', 'user_agent'];

/**
 * The records as CSV (decisions F2), oldest first, 500 rows per read: memory stays flat; named
 * `cookie-consents-<site slug>-<the site's today>.csv`.
 */
export async function exportLogs(db: Executor, siteId: string, query: Static<typeof ExportQuery>): Promise<{ fileName: string; csv: AsyncIterable<string> }> {
  const site = await siteRow(db, siteId);
  const filters = { ...query, consentId: query.consentId?.toLowerCase() };
  const fileName = `cookie-consents-${site.slug}-${localDay(new Date(), site.timezone)}.csv`;
  const csv = (async function* () {
    yield `\uFEFF${csvLine(CSV_COLUMNS)}`;
    for (let after = 0; ; ) {
      const rows = await repo.consentBatch(db, siteId, filters, after, 500);
      if (!rows.length) return;
      let chunk = '';
      for (const r of rows)
        chunk += csvLine([
          r.created_at,
          r.consent_id,
          r.action,
          r.categories.split(',').join(';'),
          r.revision,
          r.locale,
          r.page_url,
          r.ip_address,
          r.user_agent,
        ]);
      yield chunk;
      after = Number(rows[rows.length - 1]!.id);
    }
  })();
  return { fileName, csv };
}

// ------------------------------------------------------------------------------------------------
// Stats

export const StatsQuery = Type.Object(PeriodQueryProperties);
export const Stats = Type.Object({
  totalInteractions: Type.Integer(),
  acceptAll: Type.Integer(),
  rejectAll: Type.Integer(),
  custom: Type.Integer(),
  byCategory: Type.Record(Type.String(), Type.Integer(), {
    description: 'Records that accepted each category: every configured key, and any other the period holds',
  }),
  startDate: Type.String({ format: 'date' }),
  endDate: Type.String({ format: 'date' }),
});

/** Sums of the daily counts over the period's days (site timezone): they outlive record retention. */
export async function stats(db: Executor, siteId: string, query: Static<typeof StatsQuery>): Promise<Static<typeof Stats>> {
  const row = await siteRow(db, siteId);
  const range = resolvePeriod(query, row.timezone);
  const sums = await repo.sumDaily(db, siteId, range.startDate, range.endDate);
  const actions: Record<string, number> = {};
  const byCategory: Record<string, number> = Object.fromEntries(settingsOf(row).categories.map((c) => [c.key, 0]));
  for (const { metric, total } of sums) {
    const [kind, key] = [metric.slice(0, metric.indexOf(':')), metric.slice(metric.indexOf(':') + 1)];
    (kind === 'action' ? actions : byCategory)[key] = Number(total);
  }
  const [acceptAll, rejectAll, custom] = ACTIONS.map((a) => actions[a] ?? 0) as [number, number, number];
  return { totalInteractions: acceptAll + rejectAll + custom, acceptAll, rejectAll, custom, byCategory, ...range };
}

// ------------------------------------------------------------------------------------------------
// Retention

/** One batch per site whose records are older than its `logRetentionDays` (0 keeps them for ever). */
export async function pruneRecords(db: Executor): Promise<number> {
  let deleted = 0;
  for (const p of await repo.retentionPolicies(db)) {
    const cutoff = new Date(Date.now() - p.log_retention_days * 86_400_000).toISOString();
    deleted += await repo.deleteConsentsBefore(db, p.site_id, cutoff, RETENTION_BATCH);
  }
  return deleted;
}
