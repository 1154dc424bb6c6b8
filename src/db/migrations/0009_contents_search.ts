import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * Full-text search over contents (decisions C4): title, slug and body_text, title weighted above
 * slug above body. Both databases backfill the rows that already exist.
 *
 * SQLite: an external-content FTS5 table `contents_fts` (rowid = contents.id) kept in sync by
 * triggers. unicode61 folds case and, with remove_diacritics 2, the accents of Latin letters
 * (`cafe` finds `Café`), and splits on punctuation, so `multi-agent` is the two words
 * `multi agent`; the slug is indexed with its hyphens as spaces all the same.
 *
 * PostgreSQL: a stored generated tsvector `search_vector` (weights A title, B slug, C body) with
 * a GIN index, in the `simple` configuration (sites are multilingual: no stemming, no stop
 * words). `simple` keeps accents, and the default parser keeps `example.com`, `3.14` or
 * `foo_bar` as one word where unicode61 splits them, so the text goes through
 * `cairn_search_fold(text)` first: accents of Latin letters removed (NFD, combining marks after
 * an ASCII letter dropped, NFC: what remove_diacritics does; `й`, `ł`, `ß` stay), and
 * punctuation turned into spaces. It is immutable and keeps the length in characters for text
 * in NFC, so a headline computed on the folded text maps back onto the original text position by
 * position (contents.search.ts). The `unaccent` extension is not used: it needs CREATE on the
 * database, is not immutable, and changes lengths (`æ` -> `ae`).
 * `search_body` stores the folded body so search never folds 5 KB bodies at query time
 * (ts_headline runs on it for the page's rows); `search_head` is the title and slug part of
 * the vector on its own.
 */

const SQLITE_UP = [
  `create virtual table contents_fts using fts5(
     title, slug, body_text,
     content='contents', content_rowid='id',
     tokenize='unicode61 remove_diacritics 2'
   )`,
  `create trigger contents_fts_ai after insert on contents begin
     insert into contents_fts(rowid, title, slug, body_text) values (new.id, new.title, replace(new.slug, '-', ' '), new.body_text);
   end`,
  `create trigger contents_fts_ad after delete on contents begin
     insert into contents_fts(contents_fts, rowid, title, slug, body_text) values ('delete', old.id, old.title, replace(old.slug, '-', ' '), old.body_text);
   end`,
  `create trigger contents_fts_au after update of title, slug, body_text on contents begin
     insert into contents_fts(contents_fts, rowid, title, slug, body_text) values ('delete', old.id, old.title, replace(old.slug, '-', ' '), old.body_text);
     insert into contents_fts(rowid, title, slug, body_text) values (new.id, new.title, replace(new.slug, '-', ' '), new.body_text);
   end`,
  `insert into contents_fts(rowid, title, slug, body_text) select id, title, replace(slug, '-', ' '), body_text from contents`,
];

/** Code points as a bracket expression of \\uXXXX escapes, doubled for an E'' literal (ranges merged). */
function bracket(codePoints: number[]): string {
  const hex = (cp: number) => `\\\\u${cp.toString(16).padStart(4, '0')}`;
  let out = '';
  for (let i = 0; i < codePoints.length; i++) {
    let j = i;
    while (j + 1 < codePoints.length && codePoints[j + 1] === codePoints[j]! + 1) j++;
    out += j > i ? `${hex(codePoints[i]!)}-${hex(codePoints[j]!)}` : hex(codePoints[i]!);
    i = j;
  }
  return `[${out}]`;
}

/**
 * Punctuation, symbols and spaces of the ASCII, Latin-1 and General Punctuation blocks (not
 * letters, digits or marks: `ª`, `²`, `µ` stay), plus U+FDD0 and U+FDD1, the noncharacters the
 * search code uses as highlight markers. Fixed ranges of characters whose properties have not
 * changed in decades, so the list is the same on every Node version.
 */
function punctuation(unicode: boolean): number[] {
  const ranges = unicode
    ? [
        [0x21, 0x7e],
        [0xa0, 0xbf],
        [0xd7, 0xd7],
        [0xf7, 0xf7],
        [0x2000, 0x206f],
        [0xfdd0, 0xfdd1],
      ]
    : [[0x21, 0x7e]];
  const out: number[] = [];
  for (const [a, b] of ranges) for (let cp = a!; cp <= b!; cp++) if (!/[\p{L}\p{N}\p{M}]/u.test(String.fromCodePoint(cp))) out.push(cp);
  return out;
}

function postgresUp(utf8: boolean): string[] {
  // E'' literals: the backslashes reach the regular expression whatever standard_conforming_strings says.
  const punct = `E'${bracket(punctuation(utf8))}'`;
  const unaccent = utf8
    ? `case when t ~ E'[\\\\u00c0-\\\\u024f\\\\u1e00-\\\\u1eff\\\\u0300-\\\\u036f]'
         then normalize(regexp_replace(normalize(t, NFD), E'([A-Za-z])[\\\\u0300-\\\\u036f]+', E'\\\\1', 'g'), NFC)
         else t end`
    : 't';
  return [
    `create function cairn_search_fold(t text) returns text language sql immutable strict parallel safe
       as $$ select regexp_replace(${unaccent}, ${punct}, ' ', 'g') $$`,
    // Adding stored generated columns rewrites the table, which computes them for every row.
    `alter table contents add column search_body text generated always as (cairn_search_fold(coalesce(body_text, ''))) stored`,
    `alter table contents add column search_vector tsvector generated always as (
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(title, ''))), 'A') ||
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(slug, ''))), 'B') ||
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(body_text, ''))), 'C')
     ) stored`,
    // No pending list: with fastupdate (the default) every search also scans the not yet merged
    // entries (up to 4 MB), and the planner, seeing them, prefers decompressing every row's
    // vector in a sequential scan. A content write updates the index at once instead.
    `create index contents_search_idx on contents using gin (search_vector) with (fastupdate = off)`,
    // Title and slug words alone, small enough to stay in the row: the title/slug tiers of the
    // ranking test this instead of decompressing search_vector once more per matched row.
    `alter table contents add column search_head tsvector generated always as (
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(title, ''))), 'A') ||
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(slug, ''))), 'B')
     ) stored`,
  ];
}

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect === 'postgres') {
    // normalize() and \\u escapes beyond ASCII need a UTF8 database; elsewhere fold punctuation only.
    const { rows } = await sql<{ encoding: string }>`select current_setting('server_encoding') as encoding`.execute(db);
    for (const statement of postgresUp(rows[0]?.encoding === 'UTF8')) await sql.raw(statement).execute(db);
  } else {
    for (const statement of SQLITE_UP) await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  // Kysely calls down without the dialect. version() exists on PostgreSQL only, and a failed
  // statement does not abort a SQLite transaction (it would abort a PostgreSQL one).
  const postgres = await sql`select version()`.execute(db).then(
    () => true,
    () => false,
  );
  const statements = postgres
    ? [
        'drop index if exists contents_search_idx',
        'alter table contents drop column if exists search_head',
        'alter table contents drop column if exists search_vector',
        'alter table contents drop column if exists search_body',
        'drop function if exists cairn_search_fold(text)',
      ]
    : [
        'drop trigger if exists contents_fts_au',
        'drop trigger if exists contents_fts_ad',
        'drop trigger if exists contents_fts_ai',
        'drop table if exists contents_fts',
      ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
