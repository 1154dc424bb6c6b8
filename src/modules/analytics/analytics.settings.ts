import ipaddr from 'ipaddr.js';
import type { Static } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import { AppError, invalid } from '../../shared/errors.js';
import { globToRegExp, parseRange, type Range } from './analytics.enrich.js';
import * as repo from './analytics.repository.js';
import type { AnalyticsSettings, AnalyticsSettingsUpdate } from './analytics.schemas.js';

/** A site's analytics settings (decisions A6; design section 2). */
export const DEFAULTS = { trackingEnabled: true, rawRetentionDays: 90, aggregateRetentionDays: 730 } as const;

export function snippetOf(publicUrl: string, publicKey: string): string {
  return `<script defer src="${publicUrl}/v1/public/analytics/script.js" data-site-key="${publicKey}"></script>`;
}

export async function getSettings(db: Executor, publicUrl: string, siteId: string): Promise<Static<typeof AnalyticsSettings>> {
  const [row, site] = await Promise.all([repo.findSettings(db, siteId), repo.findSite(db, siteId)]);
  return {
    trackingEnabled: row ? Boolean(row.tracking_enabled) : DEFAULTS.trackingEnabled,
    rawRetentionDays: row?.raw_retention_days ?? DEFAULTS.rawRetentionDays,
    aggregateRetentionDays: row?.aggregate_retention_days ?? DEFAULTS.aggregateRetentionDays,
    excludedPaths: parseJson<string[]>(row?.excluded_paths, []),
    excludedIps: parseJson<string[]>(row?.excluded_ips, []),
    snippet: snippetOf(publicUrl, site!.public_key),
  };
}

/** `203.0.113.7/24` → `203.0.113.0/24`, one address → itself; 422 on the entry's index otherwise. */
function canonicalRange(entry: string, path: string): string {
  const text = entry.trim();
  try {
    if (text.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      const network = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(text) : ipaddr.IPv6.networkAddressFromCIDR(text);
      return `${network.toString()}/${bits}`;
    }
    return ipaddr.process(text).toString();
  } catch {
    throw invalid('VALIDATION_FAILED', path, `"${entry}" is not an IP address or a CIDR range`);
  }
}

export async function updateSettings(db: Executor, publicUrl: string, siteId: string, input: Static<typeof AnalyticsSettingsUpdate>) {
  const current = await getSettings(db, publicUrl, siteId);
  const next = { ...current, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
  if (next.aggregateRetentionDays < next.rawRetentionDays) {
    const message = `aggregateRetentionDays (${next.aggregateRetentionDays}) must be at least rawRetentionDays (${next.rawRetentionDays}): rollups are built from raw events.`;
    throw new AppError('RETENTION_INVALID', { message, errors: { aggregateRetentionDays: [message] } });
  }
  const ips = input.excludedIps ? [...new Set(input.excludedIps.map((ip, i) => canonicalRange(ip, `excludedIps[${i}]`)))] : current.excludedIps;
  const paths = input.excludedPaths ? [...new Set(input.excludedPaths.map((p) => p.trim()))] : current.excludedPaths;
  await repo.saveSettings(db, {
    site_id: siteId,
    tracking_enabled: next.trackingEnabled,
    raw_retention_days: next.rawRetentionDays,
    aggregate_retention_days: next.aggregateRetentionDays,
    excluded_paths: toJson(paths),
    excluded_ips: toJson(ips),
    updated_at: now(),
  });
  cached.delete(siteId);
  return getSettings(db, publicUrl, siteId);
}

/** What the collector checks a batch against, per site. */
export interface CollectorSettings {
  trackingEnabled: boolean;
  timezone: string;
  /** The site's domain, its `www.` twin (or bare twin), the preview URL's host. */
  hosts: string[];
  excludedPaths: RegExp[];
  excludedIps: Range[];
}

// Read on every batch: cached briefly (a PUT in this process forgets its site at once).
const CACHE_MS = 5_000;
const cached = new Map<string, { at: number; settings: CollectorSettings }>();

function hostOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

export async function collectorSettings(db: Executor, siteId: string): Promise<CollectorSettings> {
  const hit = cached.get(siteId);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.settings;
  const [row, site] = await Promise.all([repo.findSettings(db, siteId), repo.findSite(db, siteId)]);
  const domain = site!.domain.toLowerCase();
  const twin = domain.startsWith('www.') ? domain.slice(4) : `www.${domain}`;
  const settings: CollectorSettings = {
    trackingEnabled: row ? Boolean(row.tracking_enabled) : DEFAULTS.trackingEnabled,
    timezone: site!.timezone,
    hosts: [domain, twin, hostOf(site!.preview_url)].filter((h): h is string => !!h),
    excludedPaths: parseJson<string[]>(row?.excluded_paths, []).map(globToRegExp),
    excludedIps: parseJson<string[]>(row?.excluded_ips, []).map(parseRange),
  };
  if (cached.size > 10_000) cached.clear();
  cached.set(siteId, { at: Date.now(), settings });
  return settings;
}

/** Retention days of every site that set them (the others keep the defaults). */
export async function retentionBySite(db: Executor): Promise<Map<string, { raw: number; aggregate: number }>> {
  return new Map((await repo.listSettings(db)).map((r) => [r.site_id, { raw: r.raw_retention_days, aggregate: r.aggregate_retention_days }]));
}
