import type { Static } from 'typebox';
import type { Executor } from '../../db/types.js';
import { canonicalLocale } from '../../shared/locales.js';
import { pageMeta } from '../../shared/pagination.js';
import { siteBlocksTable } from './site-blocks.repository.js';
import { type SiteBlockListQuery, siteBlockFields, siteBlockList } from './site-blocks.resource.js';

/** Who reads: management tokens see every block; delivery tokens and public reads only published ones (decisions G13). */
export type Audience = 'all' | 'published';

const SUMMARY_COLUMNS = siteBlockFields.columns('summary');

/** A page of block summaries (never schema or data), as GET /site-blocks and the siteBlocks data source answer. */
export async function listSiteBlocks(db: Executor, siteId: string, query: Static<typeof SiteBlockListQuery>, audience: Audience) {
  const locale = query.locale === undefined ? undefined : (canonicalLocale(query.locale) ?? query.locale);
  const status = audience === 'published' ? 'published' : query.status;
  // A delivery reader asking for drafts gets none, never drafts.
  if (audience === 'published' && query.status === 'draft') return { data: [], meta: pageMeta(0, query.page, query.limit) };
  const { rows, total } = await siteBlocksTable.list(db, siteId, { ...query, locale, status }, siteBlockList, SUMMARY_COLUMNS);
  return { data: rows.map((r) => siteBlockFields.toSummary(r)), meta: pageMeta(total, query.page, query.limit) };
}
