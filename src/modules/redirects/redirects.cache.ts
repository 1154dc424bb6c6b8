import type { Executor } from '../../db/types.js';
import * as repo from './redirects.repository.js';
import { RuleSet } from './redirects.rules.js';
import { SLICE_MS, timeSlicer } from '../../shared/time-slice.js';

/** A site's redirect settings (decisions R8, R9). */
export interface RedirectSettings {
  logRetentionDays: number;
  anonymizeIp: boolean;
  redirectOnSlugChange: boolean;
}

export interface SiteRules {
  rules: RuleSet;
  domain: string;
  settings: RedirectSettings;
}

export function settingsOf(row: { log_retention_days: number | null; anonymize_ip: unknown; redirect_on_slug_change: unknown } | undefined): RedirectSettings {
  return {
    logRetentionDays: row?.log_retention_days ?? repo.DEFAULT_LOG_RETENTION_DAYS,
    anonymizeIp: row?.anonymize_ip === null || row?.anonymize_ip === undefined ? true : Boolean(row.anonymize_ip),
    redirectOnSlugChange: Boolean(row?.redirect_on_slug_change ?? false),
  };
}

/** Rules read per statement when loading a site's rules. */
export const RULES_PAGE = 250;

/**
 * Reads a site's active rules and settings from the database and compiles them (`forChecks`:
 * with the index loop checks ask, decisions HN19), a page of
 * RULES_PAGE rules per statement with a turn of the event loop between slices of work: one
 * statement for 70,000 rules and their compilation held the loop 1-2 s, and every other site
 * waited (decisions HN7).
 */
export async function loadSiteRules(db: Executor, siteId: string, forChecks = false): Promise<SiteRules> {
  const ctx = await repo.siteContext(db, siteId);
  // For loop and chain checks: with the target index, built as the rules come (decisions HN19).
  const rules = new RuleSet([], forChecks ? (ctx?.domain ?? '') : undefined);
  // Inside an import's transaction the writer is held: paced as such (decisions HN16).
  const slice = timeSlicer(SLICE_MS, db.isTransaction);
  for (let after = 0; ; ) {
    await slice();
    const rows = await repo.activeRulesPage(db, siteId, after, RULES_PAGE);
    for (const r of rows) {
      await slice();
      rules.add({
        id: Number(r.id),
        sourcePath: r.source_path,
        targetUrl: r.target_url,
        statusCode: Number(r.status_code),
        isRegex: Boolean(r.is_regex),
        preserveQueryString: Boolean(r.preserve_query_string),
      });
    }
    if (rows.length < RULES_PAGE) break;
    after = Number(rows[rows.length - 1]!.id);
  }
  return { rules, domain: ctx?.domain ?? '', settings: settingsOf(ctx) };
}

/**
 * Compiled rules per site, so resolving is a hash lookup and one RE2 pass, never a query
 * (decisions R5). A site's entry is forgotten when its rules or settings change: at once in
 * this process, and through the change feed in the others (PostgreSQL NOTIFY from a trigger,
 * SQLite data_version). At most `maxSites` sites and `maxRules` rules in all are held (about
 * 200 bytes a rule), least recently used out first; a site larger than the budget is still
 * served, alone.
 */
export class RedirectCache {
  private readonly sites = new Map<string, Promise<SiteRules>>();
  private readonly sizes = new Map<string, number>();
  private rules = 0;

  constructor(
    private readonly db: Executor,
    private readonly maxSites = 1000,
    private readonly maxRules = 200_000,
  ) {}

  get(siteId: string): Promise<SiteRules> {
    const held = this.sites.get(siteId);
    if (held) {
      // Re-inserted: the Map's order is the recency order.
      this.sites.delete(siteId);
      this.sites.set(siteId, held);
      return held;
    }
    const loading = loadSiteRules(this.db, siteId);
    this.sites.set(siteId, loading);
    loading.then(
      (site) => {
        if (this.sites.get(siteId) !== loading) return;
        this.sizes.set(siteId, site.rules.size);
        this.rules += site.rules.size;
        this.evict();
      },
      // A failed load (database away) is not kept: the next request tries again.
      () => {
        if (this.sites.get(siteId) === loading) this.sites.delete(siteId);
      },
    );
    return loading;
  }

  private evict(): void {
    while (this.sites.size > 1 && (this.sites.size > this.maxSites || this.rules > this.maxRules)) this.forget(this.sites.keys().next().value!);
  }

  /** Forgets one site's rules, or every site's when the change is not known precisely. */
  forget(siteId?: string): void {
    if (!siteId) {
      this.sites.clear();
      this.sizes.clear();
      this.rules = 0;
      return;
    }
    this.sites.delete(siteId);
    this.rules -= this.sizes.get(siteId) ?? 0;
    this.sizes.delete(siteId);
  }
}
