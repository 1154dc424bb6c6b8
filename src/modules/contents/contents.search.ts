import { sql, type Compilable, type Kysely, type QueryCreator, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { DB } from '../../db/types.js';
import { prepared, type PreparedQuery } from '../../db/prepared.js';
import type { SqliteFunction } from '../../db/sqlite-functions.js';
import { CLOSE, ELLIPSIS, EXCERPT_MODULE, excerptHtml, markedToHtml, OPEN, searchTier, type Term, titleHtml } from './contents.excerpt.js';

/**
 * Full-text search over contents (decisions C4), on the index of migration 0009: SQLite FTS5
 * table `contents_fts`; PostgreSQL generated columns `contents.search_vector` (GIN), `search_head`
 * (title and slug words) and `search_body` (the folded body).
 *
 * - User text is only ever words: `searchTerms` keeps runs of letters, digits and marks (any
 *   script) and drops everything else, so quotes, `AND`, `*`, `(`, `NEAR(`, `:` or emoji never
 *   become query syntax. Every term must match; the last one (as typed) also as a prefix.
 * - Order: title matches, then title+slug matches, then the rest (the body is needed); within
 *   a tier by bm25 (SQLite, weights title 10, slug 5, body 1) or ts_rank (PostgreSQL, weights
 *   A 1.0, B 0.5, C 0.2); then publishedAt (else createdAt) desc, then id desc. The tiers make
 *   "title above slug above body" hold even against a body repeating the word fifty times,
 *   which weights alone do not.
 * - Bounded (decisions MP6): only the newest SEARCH_CANDIDATES filtered matches (by id) are
 *   ranked and paged; with more, `capped` is true, the total is SEARCH_CANDIDATES and within a
 *   tier they come by date (no bm25 / ts_rank: bm25 reads every match of a term). Below the
 *   cap the total counts every filtered match; only the tiers the page falls in are ranked
 *   (SQLite: counts per tier first; PostgreSQL: the page's last tier first). Highlights are
 *   computed for the page's rows only, with noncharacter markers that become `<mark>` once the text
 *   around them is HTML-escaped.
 */

/** Terms past this many are ignored; a word longer than MAX_TERM_CHARS is cut and matched as a prefix. */
const MAX_TERMS = 16;
const MAX_TERM_CHARS = 100;
/** The last term is also matched as a prefix from this many characters on. */
const MIN_PREFIX_CHARS = 2;
/** PostgreSQL: the slice of the body ts_headline looks at, from this many characters before the first match. */
const BODY_WINDOW = 1500;
const BODY_WINDOW_BEFORE = 300;
/**
 * Matches a search ranks at most (decisions MP6): the newest this many filtered matches by id.
 * Ranking, tier counts and the total grew with the number of matches (a word in 190,000 of a
 * million posts gave no answer within 5 s); the candidates are found walking the index from
 * the newest id down, and stop at this many.
 */
export const SEARCH_CANDIDATES = 1000;

function parseTerms(q: string): Term[] {
  const words = q.normalize('NFC').match(/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu) ?? [];
  const byKey = new Map<string, Term>();
  words.forEach((word, i) => {
    const chars = Array.from(word);
    const cut = chars.length > MAX_TERM_CHARS;
    const text = cut ? chars.slice(0, MAX_TERM_CHARS).join('') : word;
    // A one-letter prefix matches most words of every long post: ranking `a*` over 100 posts of
    // 60 KB took about a second; a single letter is matched as a word (decisions HN6).
    const prefix = cut || (i === words.length - 1 && chars.length >= MIN_PREFIX_CHARS);
    const key = text.toLowerCase();
    const seen = byKey.get(key);
    // The same word twice: the exact occurrence is the stricter condition.
    if (seen) seen.prefix &&= prefix;
    else byKey.set(key, { text, prefix });
  });
  return [...byKey.values()].slice(0, MAX_TERMS);
}

/** Turns arbitrary user text into safe search terms (words; never query syntax). Empty array when nothing searchable remains. */
export function searchTerms(q: string): string[] {
  return parseTerms(q).map((t) => t.text);
}

export interface SearchHit {
  id: number;
  /** Higher is better and follows the order: 3 + s for title matches, 2 + s for title+slug, 1 + s for the rest, s in [0, 1). */
  rank: number;
  /** The whole title, HTML-escaped, with `<mark>` around matched words. */
  titleHighlight: string;
  /** A body excerpt of about 24-30 words (`…` where cut), HTML-escaped, with `<mark>` around matched words; white space collapsed. */
  bodyHighlight: string;
}

type ContentsQb = SelectQueryBuilder<any, 'contents', any>;

/** The FTS5 query: each term a quoted string (`"` doubled), the prefix ones followed by `*`; juxtaposition is AND. */
function sqliteMatch(terms: Term[]): string {
  return terms.map((t) => `"${t.text.replace(/"/g, '""')}"${t.prefix ? '*' : ''}`).join(' ');
}

/**
 * The tsquery: one `to_tsquery` per term, ANDed with `&&`. Each term is folded like the indexed
 * text (migration 0009) and quoted as a tsquery literal, with `*` for a prefix and `weights` (`A`)
 * to match title words only. The fold turns every quote and backslash
 * into a space (and terms hold letters, digits and marks only anyway), so the literal cannot be
 * broken; to_tsquery of a quoted literal does not fail, and one without lexemes drops out of
 * the AND. All constant, so PostgreSQL computes it once when planning.
 */
function pgTsquery(terms: Term[], weights = ''): RawBuilder<unknown> {
  return sql`(${sql.join(
    terms.map((t) => {
      const suffix = (t.prefix ? '*' : '') + weights;
      return sql`to_tsquery('simple', '''' || cairn_search_fold(${t.text}) || ${suffix ? `':${suffix}` : "'"})`;
    }),
    sql` && `,
  )})`;
}

/** `s` (0 or more, higher better) into [0, 1), added to the tier's base. */
function rankOf(tier: number, s: number): number {
  const score = Number.isFinite(s) && s > 0 ? s / (1 + s) : 0;
  return 3 - tier + score;
}

/**
 * PostgreSQL headlines are computed on folded text, which has the original's length: put the
 * original characters back, position by position (code points, as PostgreSQL counts). Null when
 * the lengths disagree (text not in NFC, e.g. `e` + U+0301: the fold composes it).
 */
function unfold(marked: string, original: string): string | null {
  const orig = Array.from(original);
  let k = 0;
  let out = '';
  for (const ch of marked) {
    if (ch === OPEN || ch === CLOSE) out += ch;
    else if (k < orig.length) out += orig[k++];
    else return null;
  }
  return k === orig.length ? out : null;
}

/**
 * The caller's filters on `contents` (status, locale, categories ...: `where` clauses on
 * `contents.*` columns and subqueries). `apply` receives `args` as a prepared query sees them
 * (db/prepared.ts: bindable values are markers, `structural` ones real); statements are cached
 * per `apply` function, so pass one function per kind of filter, not a new closure per call.
 */
export interface SearchFilter<A extends Record<string, unknown> = Record<string, unknown>> {
  apply: (qb: ContentsQb, p: A) => ContentsQb;
  args: A;
  structural?: readonly (keyof A & string)[];
}

/**
 * Ranked search over a site's contents, filtered by `filter`. Returns one page of hits in rank
 * order (title matches above slug matches above body matches) and the total count, in SQL.
 */
export async function searchContents(
  db: Kysely<DB>,
  siteId: string,
  q: string,
  filter: SearchFilter<any>,
  page: { page: number; limit: number },
): Promise<{ hits: SearchHit[]; total: number; capped: boolean }> {
  const terms = parseTerms(q);
  if (terms.length === 0) return { hits: [], total: 0, capped: false };
  const limit = Math.max(1, Math.floor(page.limit));
  const offset = (Math.max(1, Math.floor(page.page)) - 1) * limit;
  const kdb = db as unknown as Kysely<any>;
  return dialectOf(db).fullText === 'tsvector'
    ? searchPostgres(kdb, filter.apply(kdb.selectFrom('contents').where('contents.site_id', '=', siteId) as ContentsQb, filter.args), terms, limit, offset)
    : searchSqlite(db, siteId, filter, terms, limit, offset);
}

interface PageRow {
  id: number;
  score: number;
  tier: number;
}

// ------------------------------------------------------------------------------------------------
// SQLite

/** What the SQLite statements bind, besides the filter's own arguments (`s_` keeps the names apart). */
type SqliteArgs = {
  s_site: string;
  /** The FTS5 query the rows must match: all terms anywhere, or only in `{title}`, or in `{title slug}`. */
  s_match: string;
  /** Tier pages: the query of the tier's own column set, and of the tiers above it. */
  s_in?: string;
  s_notIn?: string;
  s_last?: number;
  s_limit?: number;
  s_offset?: number;
  /** The candidates statement: the terms' JSON (cairn_search_tier) and the capped page's size. */
  s_terms?: string;
  s_pageLimit?: number;
};

/**
 * A row of the candidates statement: the count of the newest SEARCH_CANDIDATES + 1 filtered
 * matches (`n`) and, only past the cap, one of the page's rows (`id` null otherwise).
 */
interface CandidatesRow {
  n: number;
  id: number | null;
  tier: number | null;
}

interface SqliteStatements {
  candidates: PreparedQuery<any, CandidatesRow>;
  count: PreparedQuery<any, { n: number }>;
  tierPage: PreparedQuery<any, { id: number; score: number; sort_at: string }>;
}

/**
 * `fts` is the matches of `match` (with their bm25 when `scored`), as a subquery whose column names
 * are unlike any contents column, so unqualified filters stay unambiguous; `limit -1` keeps SQLite
 * from flattening bm25() into an aggregate. CROSS JOIN fixes the order in SQLite: the matches
 * first, each looked up in contents by id. Left to itself the planner walks every row of the site
 * through an index and probes the matches, which costs the size of the site instead of the number
 * of matches (2 ms against 0.8 ms for a word in 100 of 10,000 posts, and never less).
 */
function matchedRows(db: Kysely<any>, filter: SearchFilter<any>, p: SqliteArgs, scored: boolean, newestFirst = false) {
  // `+rowid`: a filter on the match's rows, not an index constraint (as one, SQLite would run the
  // other MATCH once per row, and merge every term of a prefix each time: 30 ms instead of 0.8).
  const within = [
    ...(p.s_in ? [sql`+rowid in (select rowid from contents_fts where contents_fts match ${p.s_in})`] : []),
    ...(p.s_notIn ? [sql`+rowid not in (select rowid from contents_fts where contents_fts match ${p.s_notIn})`] : []),
  ];
  // newestFirst: FTS5 walks the matches by descending rowid (= contents.id), and SQLite keeps the
  // subquery's order through the join (no sort), so a LIMIT stops the walk.
  const fts = sql`(select rowid as fts_id${scored ? sql`, bm25(contents_fts, 10.0, 5.0, 1.0) as fts_score` : sql``}
    from contents_fts where contents_fts match ${p.s_match}${within.length ? sql` and ${sql.join(within, sql` and `)}` : sql``}${newestFirst ? sql` order by rowid desc` : sql``} limit -1)`;
  const rows = filter.apply(
    db
      .selectFrom(fts.as('fts'))
      .crossJoin('contents')
      .where(sql<boolean>`contents.id = fts.fts_id`)
      .where('contents.site_id', '=', p.s_site) as unknown as ContentsQb,
    p,
  );
  return newestFirst ? rows.orderBy(sql`fts.fts_id`, 'desc') : rows;
}

/** The statements for one filter kind (see SearchFilter), built on first use. */
const sqliteStatements = new WeakMap<SearchFilter['apply'], SqliteStatements>();

function statementsFor(filter: SearchFilter<any>): SqliteStatements {
  const cached = sqliteStatements.get(filter.apply);
  if (cached) return cached;
  const structural = (filter.structural ?? []) as Array<keyof SqliteArgs>;
  const statements: SqliteStatements = {
    // How many of the newest filtered matches there are, up to s_limit (MP6), and past the cap
    // the page of the first SEARCH_CANDIDATES of them by tier and date (SEARCH_TIER_FUNCTION):
    // on the reader thread, so the event loop receives the page, not a thousand titles to read
    // (decisions HN22).
    candidates: prepared(
      (db, p: SqliteArgs) =>
        (db as Kysely<any>)
          .with(
            (cte) => cte('candidates').materialized(),
            () =>
              matchedRows(db, filter, p, false, true)
                .select([
                  'contents.id as id',
                  'contents.title',
                  'contents.slug',
                  sql<string>`coalesce(contents.published_at, contents.created_at)`.as('sort_at'),
                ])
                .limit(p.s_limit!),
          )
          .with('counted', (qc) => qc.selectFrom('candidates').select((eb) => eb.fn.countAll<number>().as('n')))
          .selectFrom('counted')
          .leftJoin(
            (qc) =>
              qc
                .selectFrom((q) => q.selectFrom('candidates').selectAll().limit(SEARCH_CANDIDATES).as('c'))
                .select(['c.id', 'c.sort_at', sql<number>`cairn_search_tier(c.title, c.slug, ${p.s_terms})`.as('tier')])
                .where((eb) => eb(eb.selectFrom('counted').select('n'), '>', SEARCH_CANDIDATES))
                .orderBy('tier')
                .orderBy('c.sort_at', 'desc')
                .orderBy('c.id', 'desc')
                .limit(p.s_pageLimit!)
                .offset(p.s_offset!)
                .as('page'),
            (join) => join.onTrue(),
          )
          .select(['counted.n', 'page.id', 'page.tier'])
          .orderBy('page.tier')
          .orderBy('page.sort_at', 'desc')
          .orderBy('page.id', 'desc') as Compilable<CandidatesRow>,
      { structural, offLoop: true, functions: [SEARCH_TIER_FUNCTION] },
    ),
    count: prepared((db, p: SqliteArgs) => matchedRows(db, filter, p, false).select(sql<number>`count(*)`.as('n')) as Compilable<{ n: number }>, {
      structural,
      offLoop: true,
      followUp: true,
    }),
    // One tier's page in two steps, in one statement. `ranked`: the tier's filtered matches with
    // their score, no dates (a second row lookup per match: thousands for a common word).
    // `boundary`: the score of the page's last row; only rows at or above it (ties included) get
    // their dates read for the final order.
    tierPage: prepared(
      (db, p: SqliteArgs) =>
        (db as Kysely<any>)
          .with(
            (cte) => cte('ranked').materialized(),
            () => matchedRows(db, filter, p, true).select(['contents.id as id', sql<number>`-fts.fts_score`.as('score')]),
          )
          .with(
            (cte) => cte('boundary').materialized(),
            (qc) => qc.selectFrom('ranked').select('score').orderBy('score', 'desc').limit(1).offset(p.s_last!),
          )
          .selectFrom('ranked as r')
          .innerJoin('contents as c', 'c.id', 'r.id')
          .select(['r.id', 'r.score', sql<string>`coalesce(c.published_at, c.created_at)`.as('sort_at')])
          .where(sql<boolean>`not exists (select 1 from boundary) or r.score >= (select score from boundary)`)
          .orderBy('r.score', 'desc')
          .orderBy('sort_at', 'desc')
          .orderBy('r.id', 'desc')
          .limit(p.s_limit!)
          .offset(p.s_offset!),
      { structural, offLoop: true, followUp: true },
    ),
  };
  sqliteStatements.set(filter.apply, statements);
  return statements;
}

/**
 * The newest filtered matches first (MP6: the total, and whether there are more than the cap),
 * then the page: past the cap from those candidates alone (ordered in the same statement), below
 * it ranked by tier and bm25 (rankedPage).
 */
async function searchSqlite(db: Kysely<DB>, siteId: string, filter: SearchFilter<any>, terms: Term[], limit: number, offset: number) {
  const match = sqliteMatch(terms);
  const statements = statementsFor(filter);
  // One more than the cap tells whether there are more.
  const counted = await statements.candidates.execute(db, {
    ...filter.args,
    s_site: siteId,
    s_match: match,
    s_limit: SEARCH_CANDIDATES + 1,
    s_terms: JSON.stringify(terms),
    s_pageLimit: limit,
    s_offset: offset,
  });
  const n = Number(counted[0]?.n ?? 0);
  const capped = n > SEARCH_CANDIDATES;
  const total = Math.min(n, SEARCH_CANDIDATES);
  if (total === 0 || offset >= total) return { hits: [], total, capped };
  const rows = capped
    ? counted.filter((r) => r.id !== null).map((r) => ({ id: Number(r.id), score: 0, tier: Number(r.tier) }))
    : await rankedPage(db, siteId, filter, statements, terms, total, offset, limit);
  if (rows.length === 0) return { hits: [], total, capped };

  return pageHits(db, terms, rows, total, capped);
}

/**
 * Below the cap (N13), tiers first, ranks second: the filtered matches are counted in the title,
 * and in title or slug; only the tiers the requested page falls in are ranked. A word in a third
 * of 10,000 posts and in a few dozen titles ranks those few dozen for page 1, instead of scoring
 * every match (1.5 ms instead of 9).
 */
async function rankedPage(
  db: Kysely<DB>,
  siteId: string,
  filter: SearchFilter<any>,
  statements: SqliteStatements,
  terms: Term[],
  total: number,
  offset: number,
  limit: number,
) {
  const match = sqliteMatch(terms);
  const inTitle = `{title} : (${match})`;
  const inHead = `{title slug} : (${match})`;
  const count = async (s_match: string) => Number((await statements.count.executeTakeFirst(db, { ...filter.args, s_site: siteId, s_match }))?.n ?? 0);
  const end = Math.min(offset + limit, total);
  const titleCount = await count(inTitle);
  const headCount = end <= titleCount ? titleCount : await count(inHead);
  // Each tier's range of positions in the whole ordered result, and the rows that make it up.
  const tiers = [
    { from: 0, to: titleCount, in: inTitle, notIn: undefined },
    { from: titleCount, to: headCount, in: inHead, notIn: inTitle },
    { from: headCount, to: total, in: undefined, notIn: inHead },
  ];
  const rows: Array<{ id: number; score: number; tier: number }> = [];
  for (const [tier, range] of tiers.entries()) {
    const from = Math.max(offset, range.from);
    const to = Math.min(end, range.to);
    if (from >= to) continue;
    const page = await statements.tierPage.execute(db, {
      ...filter.args,
      s_site: siteId,
      s_match: match,
      s_in: range.in,
      s_notIn: range.notIn,
      s_last: to - range.from - 1,
      s_limit: to - from,
      s_offset: from - range.from,
    });
    for (const r of page) rows.push({ id: Number(r.id), score: Number(r.score), tier });
  }
  return rows;
}

/** The page's hits with their highlights. */
async function pageHits(db: Kysely<DB>, terms: Term[], rows: Array<{ id: number; score: number; tier: number }>, total: number, capped: boolean) {
  // The highlights are made by the statement (contents.excerpt.ts as SQL functions), on the
  // reader thread: the event loop receives a page's finished HTML, not 100 bodies to scan
  // (decisions HN15). A statement does EXCERPT_ROWS rows, so other searches queued on the thread
  // wait for a few rows, not a page.
  const termsJson = JSON.stringify(terms);
  const byId = new Map<number, { title_html: string; body_html: string }>();
  for (let i = 0; i < rows.length; i += EXCERPT_ROWS) {
    const ids = JSON.stringify(rows.slice(i, i + EXCERPT_ROWS).map((r) => r.id));
    for (const m of await highlightsQuery.execute(db, { ids, terms: termsJson })) byId.set(Number(m.id), m);
  }
  const hits: SearchHit[] = rows.map((r) => ({
    id: r.id,
    rank: rankOf(r.tier, r.score),
    titleHighlight: byId.get(r.id)?.title_html ?? '',
    bodyHighlight: byId.get(r.id)?.body_html ?? '',
  }));
  return { total, capped, hits };
}

/**
 * Past the cap (MP6) the page comes from the candidates alone: the tier from the title and slug
 * with the highlights' notion of a word (every term in the title, else in title or slug), then by
 * date (`searchTier`, called by the candidates statement). Each further FTS5 statement would cost
 * what the candidates did again: a prefix term's postings are merged whole for every cursor
 * (130 ms for `platform*` in a third of a million posts), and bm25 reads every match of each
 * term for its weights.
 */
const SEARCH_TIER_FUNCTION: SqliteFunction = { name: 'cairn_search_tier', fn: searchTier, module: EXCERPT_MODULE, exportName: 'searchTier' };

/** The highlight functions SQLite statements call (HN15). */
const HIGHLIGHT_FUNCTIONS: readonly SqliteFunction[] = [
  { name: 'cairn_title_html', fn: titleHtml, module: EXCERPT_MODULE, exportName: 'titleHtml' },
  { name: 'cairn_excerpt_html', fn: excerptHtml, module: EXCERPT_MODULE, exportName: 'excerptHtml' },
];

// The page's titles and excerpts, by rowid: no MATCH, so no FTS5 auxiliary function reads the
// rows' hit lists (highlight() loaded every hit of a body to mark a title).
const highlightsQuery = prepared(
  (_db, p: { ids: string; terms: string }) => sql<{ id: number; title_html: string; body_html: string }>`
    select rowid as id, cairn_title_html(title, ${p.terms}) as title_html, cairn_excerpt_html(body_text, ${p.terms}) as body_html
    from contents_fts
    where rowid in (select value from json_each(${p.ids}))`,
  { offLoop: true, followUp: true, functions: HIGHLIGHT_FUNCTIONS },
);
/** Rows highlighted per statement. */
const EXCERPT_ROWS = 10;

// ------------------------------------------------------------------------------------------------
// PostgreSQL

async function searchPostgres(db: Kysely<any>, base: ContentsQb, terms: Term[], limit: number, offset: number) {
  const tsq = () => pgTsquery(terms);
  // The tsquery behind a scalar subquery: the planner then cannot estimate how many rows match
  // (it assumes few) and always takes the GIN index, which answers `@@` without reading the
  // vectors. Given the constant, it knows a common word matches most rows and prefers a
  // sequential scan that decompresses every row's vector just to test it: 130 ms instead of
  // 8 ms for a word in all of 10,000 posts.
  const filtered = base.where(sql<boolean>`contents.search_vector @@ (select ${tsq()})`);
  // The candidates (MP6): the newest SEARCH_CANDIDATES filtered matches, one more to know whether
  // there are more; past the cap the page is made of the rows from the lowest one's id up, by tier and date.
  const candidates = await filtered
    .select('contents.id')
    .orderBy('contents.id', 'desc')
    .limit(SEARCH_CANDIDATES + 1)
    .execute();
  const capped = candidates.length > SEARCH_CANDIDATES;
  const total = Math.min(candidates.length, SEARCH_CANDIDATES);
  if (total === 0 || offset >= total) return { hits: [], total, capped };
  const matched = capped ? filtered.where('contents.id', '>=', Number(candidates[SEARCH_CANDIDATES - 1]!.id)) : filtered;
  // search_head is small and stays in the row: the tier costs nothing. search_vector is
  // compressed out of line and ts_rank decompresses it for each row it ranks, which is most of
  // the cost of a common word; so `cut` first finds the tier of the page's last row, and only
  // the rows of that tier or better are ranked (a word in every body but in enough titles
  // ranks the title matches only).
  const tier = () => sql<number>`case
    when contents.search_head @@ ${pgTsquery(terms, 'A')} then 0
    when contents.search_head @@ ${tsq()} then 1
    else 2 end`;
  const page = (qc: QueryCreator<any>) =>
    qc
      .selectFrom(
        matched
          .select([
            'contents.id as id',
            tier().as('tier'),
            'contents.search_vector as vector',
            sql<string>`coalesce(contents.published_at, contents.created_at)`.as('sort_at'),
          ])
          .as('m'),
      )
      .select([
        'm.id',
        'm.tier',
        'm.sort_at',
        // Capped: by date within a tier, as on SQLite (MP6).
        capped
          ? sql<number>`0`.as('score')
          : sql<number>`case when m.tier <= coalesce((select tier from cut), 2)
          then ts_rank('{0.1, 0.2, 0.5, 1.0}', m.vector, ${tsq()}) else 0 end`.as('score'),
      ])
      .orderBy('m.tier')
      .orderBy('score', 'desc')
      .orderBy('m.sort_at', 'desc')
      .orderBy('m.id', 'desc')
      .limit(limit)
      .offset(offset);

  const titleOptions = `HighlightAll=true, StartSel="${OPEN}", StopSel="${CLOSE}"`;
  const bodyOptions = `MaxWords=30, MinWords=15, MaxFragments=1, ShortWord=0, StartSel="${OPEN}", StopSel="${CLOSE}"`;
  // Where the body excerpt is looked for: ts_headline parses all the text it is given (about
  // 0.5 ms for 5 KB), so it gets BODY_WINDOW characters of search_body (the stored folded body)
  // from a little before the first word starting with a term (case-insensitive regular
  // expression; terms are letters, digits and marks, nothing a regular expression reads as
  // syntax), or from the start when only the title matched.
  const firstWord = sql`${'\\m('} || ${sql.join(
    terms.map((t) => sql`cairn_search_fold(${t.text})`),
    sql` || '|' || `,
  )} || ')'`;
  const windowStart = sql<number>`greatest(1, regexp_instr(c.search_body, ${firstWord}, 1, 1, 0, 'i') - ${BODY_WINDOW_BEFORE})`;
  // The fragment is then found in search_body, and the same span of body_text gives the
  // original characters back (unfold).
  const rows = (await db
    .with(
      (cte) => cte('cut').materialized(),
      () =>
        matched
          .select(tier().as('tier'))
          .orderBy('tier')
          .limit(1)
          .offset(offset + limit - 1),
    )
    .with('page', page)
    // Materialized: inlined, each reference to title_hl / body_hl would run ts_headline again.
    .with(
      (cte) => cte('hl').materialized(),
      (qc) =>
        qc
          .selectFrom('page')
          .innerJoin('contents as t', 't.id', 'page.id')
          // The body's text and its folded form, from the bodies table (migration 0025).
          .innerJoin('content_bodies as c', 'c.content_id', 'page.id')
          .select([
            'page.id',
            'page.score',
            'page.tier',
            'page.sort_at',
            't.title',
            'c.body_text',
            'c.search_body',
            sql<string>`ts_headline('simple', cairn_search_fold(t.title), ${tsq()}, ${titleOptions})`.as('title_hl'),
            sql<string>`ts_headline('simple', substr(c.search_body, ${windowStart}, ${BODY_WINDOW}), ${tsq()}, ${bodyOptions})`.as('body_hl'),
          ]),
    )
    .with('located', (qc) =>
      qc
        .selectFrom('hl')
        .select([
          'id',
          'score',
          'tier',
          'sort_at',
          'title',
          'title_hl',
          'body_hl',
          'body_text',
          sql<number>`strpos(search_body, translate(body_hl, ${OPEN + CLOSE}, ''))`.as('body_pos'),
          sql<number>`length(translate(body_hl, ${OPEN + CLOSE}, ''))`.as('body_plain_len'),
        ]),
    )
    .selectFrom('located')
    .select([
      'id',
      'score',
      'tier',
      'title',
      'title_hl',
      'body_hl',
      'body_pos',
      'body_plain_len',
      sql<number>`length(body_text)`.as('body_len'),
      sql<string>`substr(body_text, greatest(body_pos, 1), body_plain_len)`.as('body_src'),
    ])
    .orderBy('tier')
    .orderBy('score', 'desc')
    .orderBy('sort_at', 'desc')
    .orderBy('id', 'desc')
    .execute()) as Array<
    PageRow & {
      title: string;
      title_hl: string;
      body_hl: string;
      body_pos: number;
      body_plain_len: number;
      body_len: number;
      body_src: string;
    }
  >;
  return {
    total,
    capped,
    hits: rows.map((r): SearchHit => {
      const pos = Number(r.body_pos);
      let body = pos > 0 ? unfold(r.body_hl, r.body_src) : null;
      if (body !== null && body.trim() !== '') {
        // As snippet() does on SQLite: an ellipsis where the excerpt cuts the body.
        if (pos > 1) body = ELLIPSIS + body;
        if (pos - 1 + Number(r.body_plain_len) < Number(r.body_len)) body += ELLIPSIS;
      }
      return {
        id: Number(r.id),
        rank: rankOf(Number(r.tier), Number(r.score)),
        titleHighlight: markedToHtml(unfold(r.title_hl, r.title) ?? r.title_hl),
        bodyHighlight: markedToHtml(body ?? r.body_hl),
      };
    }),
  };
}
