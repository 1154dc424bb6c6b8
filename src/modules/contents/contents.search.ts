import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import { escapeHtml } from '../../shared/richtext/to-html.js';

/**
 * Full-text search over contents (decisions C4), on the index of migration 0009: SQLite FTS5
 * table `contents_fts`, PostgreSQL generated column `contents.search_vector`.
 *
 * - User text is only ever words: `searchTerms` keeps runs of letters, digits and marks (any
 *   script) and drops everything else, so quotes, `AND`, `*`, `(`, `NEAR(`, `:` or emoji can
 *   never become query syntax. Every term must match; the last one (as typed) is a prefix.
 * - Order: title matches, then title+slug matches, then the rest (body needed); within each
 *   tier by bm25 (SQLite, weights 10/5/1) or ts_rank (PostgreSQL, weights A 1.0, B 0.5, C 0.2);
 *   then publishedAt (else createdAt) desc, then id desc. The tiers make "title above slug above
 *   body" hold even against a body that repeats a word fifty times, which weights alone do not.
 * - Highlights are computed for the page's rows only, with sentinel characters that are then
 *   turned into `<mark>` after the text is HTML-escaped.
 */

/** Terms past this many are ignored; a word longer than MAX_TERM_CHARS is cut and matched as a prefix. */
const MAX_TERMS = 16;
const MAX_TERM_CHARS = 100;
/** Noncharacters (permanently reserved for internal use): the highlight markers before escaping. */
const OPEN = '\uFDD0';
const CLOSE = '\uFDD1';
const SNIPPET_TOKENS = 24;
const ELLIPSIS = '…';

interface Term {
  text: string;
  prefix: boolean;
}

function parseTerms(q: string): Term[] {
  const words = q.normalize('NFC').match(/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu) ?? [];
  const byKey = new Map<string, Term>();
  words.forEach((word, i) => {
    const chars = Array.from(word);
    const cut = chars.length > MAX_TERM_CHARS;
    const text = cut ? chars.slice(0, MAX_TERM_CHARS).join('') : word;
    const prefix = cut || i === words.length - 1;
    const key = text.toLowerCase();
    const seen = byKey.get(key);
    // The same word twice: an exact occurrence is the stricter condition.
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
  /** Higher is better, consistent with the order: 3 + s for title matches, 2 + s for title+slug, 1 + s for the rest, s in [0, 1). */
  rank: number;
  /** The whole title, HTML-escaped, with `<mark>` around matched words. */
  titleHighlight: string;
  /** A short body excerpt (about 24-30 words, `…` where cut), HTML-escaped, with `<mark>` around matched words. */
  bodyHighlight: string;
}

type ContentsQb = SelectQueryBuilder<any, 'contents', any>;

/** The FTS5 query: each term a quoted string (`"` doubled), the prefix ones followed by `*`; juxtaposition is AND. */
function sqliteMatch(terms: Term[]): string {
  return terms.map((t) => `"${t.text.replace(/"/g, '""')}"${t.prefix ? '*' : ''}`).join(' ');
}

/**
 * The tsquery: one `to_tsquery` per term, ANDed with `&&`. Each term is folded like the indexed
 * text (migration 0009), then quoted as a tsquery literal ('' and \ escaped), `:*` for a prefix.
 * Terms are letters, digits and marks only, so the quoting is belt and braces; to_tsquery of a
 * quoted literal cannot fail, and a literal with no lexeme is dropped from the AND.
 */
function pgTsquery(terms: Term[]): RawBuilder<unknown> {
  return sql`(${sql.join(
    terms.map((t) => {
      const literal = sql`'''' || replace(replace(cairn_search_fold(${t.text}), '\\', '\\\\'), '''', '''''') || ''''`;
      return sql`to_tsquery('simple', ${literal}${t.prefix ? sql` || ':*'` : sql``})`;
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
 * Text with OPEN/CLOSE markers into HTML: every piece escaped, markers as `<mark>`/`</mark>`,
 * balanced whatever the text holds (a stray marker character in the stored text cannot open an
 * unclosed tag). Runs of white space become one space.
 */
export function markedToHtml(text: string): string {
  let out = '';
  let open = false;
  let piece = '';
  const flush = () => {
    out += escapeHtml(piece);
    piece = '';
  };
  for (const ch of text.replace(/\s+/g, ' ').trim()) {
    if (ch === OPEN) {
      if (!open) { flush(); out += '<mark>'; open = true; }
    } else if (ch === CLOSE) {
      if (open) { flush(); out += '</mark>'; open = false; }
    } else piece += ch;
  }
  flush();
  if (open) out += '</mark>';
  return out.replace(/<mark><\/mark>/g, '');
}

/**
 * PostgreSQL headlines are computed on the folded text (same length, accents and punctuation
 * folded): put the original characters back, position by position (code points, as PostgreSQL
 * counts). Null when the lengths disagree, which would be a bug.
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
 * Ranked search over a site's contents. `filter` receives a query builder over the `contents` table (aliased `contents`)
 * and adds the caller's list filters (status, locale, categories ... — the lead's code; only `where` clauses on `contents.*` columns and subqueries).
 * Returns one page of hits in rank order (title matches above slug matches above body matches) and the total count, in SQL.
 */
export async function searchContents(
  db: Kysely<DB>,
  dialect: 'sqlite' | 'postgres',
  siteId: string,
  q: string,
  filter: (qb: SelectQueryBuilder<any, 'contents', any>) => SelectQueryBuilder<any, 'contents', any>,
  page: { page: number; limit: number },
): Promise<{ hits: SearchHit[]; total: number }> {
  const terms = parseTerms(q);
  if (terms.length === 0) return { hits: [], total: 0 };
  const limit = Math.max(1, Math.floor(page.limit));
  const offset = (Math.max(1, Math.floor(page.page)) - 1) * limit;
  const kdb = db as unknown as Kysely<any>;
  const base = filter(kdb.selectFrom('contents').where('contents.site_id', '=', siteId) as ContentsQb);
  return dialect === 'postgres'
    ? searchPostgres(kdb, base, terms, limit, offset)
    : searchSqlite(kdb, base, terms, limit, offset);
}

interface PageRow {
  id: number;
  score: number;
  tier: number;
  total: number;
}

async function searchSqlite(db: Kysely<any>, base: ContentsQb, terms: Term[], limit: number, offset: number) {
  const match = sqliteMatch(terms);
  // Column names of the joined subquery are unlike any contents column, so unqualified filters stay unambiguous.
  const fts = sql`(select rowid as fts_id, bm25(contents_fts, 10.0, 5.0, 1.0) as fts_score from contents_fts where contents_fts match ${match})`;
  const inColumns = (spec: string) =>
    sql`contents.id in (select rowid from contents_fts where contents_fts match ${`{${spec}} : (${match})`})`;
  const matched = base.innerJoin(fts.as('fts'), 'fts.fts_id', 'contents.id');
  const rows = (await matched
    .select([
      'contents.id as id',
      sql<number>`-fts.fts_score`.as('score'),
      sql<number>`case when ${inColumns('title')} then 0 when ${inColumns('title slug')} then 1 else 2 end`.as('tier'),
      sql<number>`count(*) over ()`.as('total'),
    ])
    .orderBy('tier')
    .orderBy('score', 'desc')
    .orderBy(sql`coalesce(contents.published_at, contents.created_at)`, 'desc')
    .orderBy('contents.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()) as PageRow[];
  if (rows.length === 0) return { hits: [], total: offset === 0 ? 0 : await countMatched(matched) };

  const ids = rows.map((r) => Number(r.id));
  const marks = (await sql<{ id: number; title_hl: string | null; body_hl: string | null }>`
    select rowid as id,
      highlight(contents_fts, 0, ${OPEN}, ${CLOSE}) as title_hl,
      snippet(contents_fts, 2, ${OPEN}, ${CLOSE}, ${ELLIPSIS}, ${SNIPPET_TOKENS}) as body_hl
    from contents_fts where contents_fts match ${match} and rowid in (${sql.join(ids)})`.execute(db)).rows;
  const byId = new Map(marks.map((m) => [Number(m.id), m]));
  return {
    total: Number(rows[0]!.total),
    hits: rows.map((r): SearchHit => {
      const m = byId.get(Number(r.id));
      return {
        id: Number(r.id),
        rank: rankOf(Number(r.tier), Number(r.score)),
        titleHighlight: markedToHtml(m?.title_hl ?? ''),
        bodyHighlight: markedToHtml(m?.body_hl ?? ''),
      };
    }),
  };
}

async function countMatched(matched: SelectQueryBuilder<any, any, any>): Promise<number> {
  const row = await matched.select(sql<number>`count(*)`.as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

async function searchPostgres(db: Kysely<any>, base: ContentsQb, terms: Term[], limit: number, offset: number) {
  const tsq = () => pgTsquery(terms);
  const matched = base.where(sql<boolean>`contents.search_vector @@ ${tsq()}`);
  const pageQuery = matched
    .select([
      'contents.id as id',
      sql<number>`ts_rank('{0.1, 0.2, 0.5, 1.0}', contents.search_vector, ${tsq()})`.as('score'),
      sql<number>`case
        when to_tsvector('simple', cairn_search_fold(contents.title)) @@ ${tsq()} then 0
        when to_tsvector('simple', cairn_search_fold(contents.title || ' ' || contents.slug)) @@ ${tsq()} then 1
        else 2 end`.as('tier'),
      sql<string>`coalesce(contents.published_at, contents.created_at)`.as('sort_at'),
      sql<number>`count(*) over ()`.as('total'),
    ])
    .orderBy('tier')
    .orderBy('score', 'desc')
    .orderBy('sort_at', 'desc')
    .orderBy('contents.id', 'desc')
    .limit(limit)
    .offset(offset);

  const titleOptions = `HighlightAll=true, StartSel="${OPEN}", StopSel="${CLOSE}"`;
  const bodyOptions = `MaxWords=30, MinWords=15, MaxFragments=1, StartSel="${OPEN}", StopSel="${CLOSE}"`;
  // ts_headline runs for the page's rows only; the body fragment is located in the folded body
  // so the original characters of that span can be put back (see unfold).
  const rows = (await db
    .with('page', () => pageQuery)
    .with('hl', (qc) =>
      qc
        .selectFrom('page')
        .innerJoin('contents as c', 'c.id', 'page.id')
        .select([
          'page.id', 'page.score', 'page.tier', 'page.total', 'page.sort_at', 'c.title', 'c.body_text',
          sql<string>`ts_headline('simple', cairn_search_fold(c.title), ${tsq()}, ${titleOptions})`.as('title_hl'),
          sql<string>`ts_headline('simple', cairn_search_fold(c.body_text), ${tsq()}, ${bodyOptions})`.as('body_hl'),
        ]),
    )
    .with('located', (qc) =>
      qc
        .selectFrom('hl')
        .select([
          'id', 'score', 'tier', 'total', 'sort_at', 'title', 'title_hl', 'body_hl', 'body_text',
          sql<string>`translate(body_hl, ${OPEN + CLOSE}, '')`.as('body_plain'),
        ]),
    )
    .selectFrom('located')
    .select([
      'id', 'score', 'tier', 'total', 'title', 'title_hl', 'body_hl',
      sql<number>`strpos(cairn_search_fold(body_text), body_plain)`.as('body_pos'),
      sql<number>`length(body_plain)`.as('body_plain_len'),
      sql<number>`length(body_text)`.as('body_len'),
      sql<string>`substr(body_text, greatest(strpos(cairn_search_fold(body_text), body_plain), 1), length(body_plain))`.as('body_src'),
    ])
    .orderBy('tier')
    .orderBy('score', 'desc')
    .orderBy('sort_at', 'desc')
    .orderBy('id', 'desc')
    .execute()) as Array<PageRow & {
      title: string; title_hl: string; body_hl: string; body_pos: number; body_plain_len: number; body_len: number; body_src: string;
    }>;
  if (rows.length === 0) return { hits: [], total: offset === 0 ? 0 : await countMatched(matched) };

  return {
    total: Number(rows[0]!.total),
    hits: rows.map((r): SearchHit => {
      const pos = Number(r.body_pos);
      let body = pos > 0 ? unfold(r.body_hl, r.body_src) : null;
      if (body !== null && body.trim() !== '') {
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
