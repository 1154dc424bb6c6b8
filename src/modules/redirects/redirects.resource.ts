import { Type } from 'typebox';
import type { Db, Executor } from '../../db/types.js';
import { common, fieldMap } from '../../kit/fields.js';
import type { ListSpec } from '../../kit/repository.js';
import { resource } from '../../kit/resource.js';
import { invalid } from '../../shared/errors.js';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import { loadSiteRules, type RedirectCache } from './redirects.cache.js';
import { type HitRecorder, missHash } from './redirects.hits.js';
import * as repo from './redirects.repository.js';
import { checkChain, checkRule, exactKey, type Rule, sourceHash } from './redirects.rules.js';

const bool = (column: string, description: string, insertDefault: boolean) =>
  ({ column, schema: Type.Boolean(), input: Type.Boolean({ description }), read: Boolean, insertDefault }) as const;

export const STATUS_CODES = [301, 302, 307, 308] as const;
const StatusCode = Type.Union(
  STATUS_CODES.map((c) => Type.Literal(c)),
  { description: '301 (default), 302, 307 or 308' },
);

/** Spec "Redirect" (decisions R1-R3): the one field map of the API shape, the bodies, the row and the patch. */
export const redirectFields = fieldMap({
  id: common.id,
  sourcePath: {
    column: 'source_path',
    schema: Type.String(),
    input: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'A path on the site (`/old-page`; query string and trailing slash ignored), or an RE2 pattern when isRegex',
    }),
    create: 'required',
  },
  targetUrl: {
    column: 'target_url',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 2048, description: 'An http(s) URL or a path starting with /; `$1`-`$9` insert a regex capture group' }),
    create: 'required',
  },
  statusCode: { column: 'status_code', schema: Type.Integer(), input: StatusCode, read: Number, insertDefault: 301 },
  isRegex: bool('is_regex', 'The source is an RE2 regular expression matched against the path (default false)', false),
  isActive: bool('is_active', 'Active rules redirect (default true)', true),
  preserveQueryString: bool('preserve_query_string', "Append the request's query string to the target (default false)", false),
  note: { column: 'note', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 500 })) },
  hitCount: { column: 'hit_count', schema: Type.Integer(), read: Number },
  lastHitAt: { column: 'last_hit_at', schema: Nullable(Timestamp) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const redirectList = {
  sort: ['created_at', 'updated_at', 'source_path', 'target_url', 'status_code', 'hit_count', 'last_hit_at'],
  search: ['source_path', 'target_url', 'note'],
  common: ['search', 'ids', 'excludeIds'],
  filters: {
    isActive: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) rules' })),
    isRegex: Type.Optional(Type.Boolean({ description: 'Only regex (true) or exact (false) rules' })),
    statusCode: Type.Optional(StatusCode),
  },
  apply: (qb, query: { isActive?: boolean; isRegex?: boolean; statusCode?: number }) => {
    let q = qb;
    if (query.isActive !== undefined) q = q.where('is_active', '=', query.isActive);
    if (query.isRegex !== undefined) q = q.where('is_regex', '=', query.isRegex);
    if (query.statusCode !== undefined) q = q.where('status_code', '=', query.statusCode);
    return q;
  },
} satisfies ListSpec<any, any>;

/** What the routes hand the service: the database, the compiled-rules cache and the hit recorder. */
export interface RedirectsContext {
  db: Db;
  cache: RedirectCache;
  hits: HitRecorder;
}

export type RuleInput = {
  sourcePath: string;
  targetUrl: string;
  statusCode?: number;
  isRegex?: boolean;
  isActive?: boolean;
  preserveQueryString?: boolean;
  note?: string | null;
};

export function asRule(id: number, input: RuleInput): Rule {
  return {
    id,
    sourcePath: input.sourcePath,
    targetUrl: input.targetUrl,
    statusCode: input.statusCode ?? 301,
    isRegex: input.isRegex ?? false,
    preserveQueryString: input.preserveQueryString ?? false,
  };
}

async function assertSourceFree(db: Executor, siteId: string, hash: string, exceptId?: number): Promise<void> {
  const taken = await repo.idBySourceHash(db, siteId, hash);
  if (taken && Number(taken.id) !== exceptId) throw invalid('SOURCE_PATH_TAKEN', 'sourcePath');
}

/** R2: an active rule may not lead back to itself nor grow a chain past 5, checked against the site's active rules read in the transaction. */
async function assertNoLoop(db: Executor, siteId: string, rule: Rule) {
  const site = await loadSiteRules(db, siteId, true);
  if (rule.id) site.rules.remove(rule.id);
  site.rules.add(rule);
  checkChain(site.rules, rule, site.domain);
}

/** Redirects on the resource kit: list and get flush the buffered hit counts first; writes drop the site's compiled rules. */
export const redirects = resource({
  table: 'redirects',
  noun: 'redirect',
  name: 'Redirect',
  plural: 'Redirects',
  path: '/redirects',
  scope: 'redirects',
  fields: redirectFields,
  examples: {
    record: {
      id: 12,
      sourcePath: '/blog/old-post',
      targetUrl: '/news/new-post',
      statusCode: 301,
      isRegex: false,
      isActive: true,
      preserveQueryString: true,
      note: 'Moved when the blog became news',
      hitCount: 57,
      lastHitAt: '2026-03-20T18:04:41.000Z',
      createdAt: '2026-01-05T09:00:00.000Z',
      updatedAt: '2026-01-05T09:00:00.000Z',
    },
    create: { sourcePath: '/blog/old-post', targetUrl: '/news/new-post', statusCode: 301, note: 'Moved when the blog became news' },
  },
  list: redirectList,
  rules: {
    prepare(_db, { input }) {
      checkRule({ sourcePath: input.sourcePath, targetUrl: input.targetUrl, isRegex: input.isRegex ?? false });
    },
    async create(tx, { siteId, input, row }) {
      row.source_hash = sourceHash(input.sourcePath, input.isRegex ?? false);
      await assertSourceFree(tx, siteId, row.source_hash);
      if (input.isActive !== false) await assertNoLoop(tx, siteId, asRule(0, input as RuleInput));
      // The path now redirects: it leaves the 404 log.
      if (!input.isRegex) await repo.deleteMissByHash(tx, siteId, missHash(exactKey(input.sourcePath)));
    },
    /** Checked like a create, on the stored rule with the changes applied. */
    async update(tx, { siteId, current, input, patch }) {
      const id = Number(current.id);
      const next = { ...redirectFields.toApi(current), ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
      checkRule(next);
      patch.source_hash = sourceHash(next.sourcePath, next.isRegex);
      await assertSourceFree(tx, siteId, patch.source_hash, id);
      if (next.isActive) await assertNoLoop(tx, siteId, asRule(id, next));
    },
  },
  hooks: {
    beforeRead: (ctx: RedirectsContext) => ctx.hits.flush(),
    afterWrite: (ctx: RedirectsContext, siteId) => ctx.cache.forget(siteId),
  },
  docs: {
    list: { summary: 'List redirects with hit counts' },
    create: {
      description:
        'An exact source is a path (query string and a trailing slash ignored; 422 `SOURCE_PATH_INVALID` otherwise); with `isRegex` it is an RE2 pattern ' +
        '(linear time; no backreferences or lookaround: 422 `PATTERN_INVALID`). 422 `SOURCE_PATH_TAKEN` for a source the site already has, ' +
        '`REDIRECT_LOOP` for a rule that leads back to itself (a regex rule also when it catches its own targets), `REDIRECT_CHAIN_TOO_LONG` for a chain of more than 5 redirects. ' +
        'A source with a control character (a newline) is 422 `SOURCE_PATH_INVALID`; a target inserting a group the pattern lacks (`$9`), or a capture in its host, is 422 `TARGET_INVALID`. ' +
        'A capture that would make the resolved target leave the rules (`//host`, `/\\host`, spaces) makes the rule not apply to that path (decisions HR1).',
    },
    update: { description: 'Checked like a create (source, pattern, loops and chains).' },
    delete: { summary: 'Delete a redirect with its log' },
  },
});
