import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * Full-text search over contents (decisions C4): title, slug and body_text, title weighted above
 * slug above body.
 *
 * SQLite: an external-content FTS5 table `contents_fts` (rowid = contents.id) kept in sync by
 * triggers. unicode61 folds case and, with remove_diacritics 2, accents (`cafe` finds `Café`),
 * and splits on punctuation, so `multi-agent` is the two words `multi agent`; the slug is
 * indexed with its hyphens as spaces all the same.
 *
 * PostgreSQL: a stored generated tsvector `search_vector` (weights A title, B slug, C body) and
 * a GIN index, with the `simple` configuration (sites are multilingual: no stemming, no stop
 * words). `simple` keeps accents and the default parser keeps `example.com`, `3.14` or
 * `foo_bar` whole, where unicode61 splits them; so the text goes through
 * `cairn_search_fold(text)` first, an immutable `translate()` that maps accented Latin letters
 * to their base letter and punctuation to a space, one character for one character, so that
 * both databases find the same words (no `unaccent` extension, which needs CREATE privilege on
 * the database and is not immutable). Being length-preserving, a headline computed on the
 * folded text maps back onto the original text position by position (contents.search.ts).
 *
 * Both backfill the rows that already exist.
 */

/**
 * The fold map, computed from fixed code point ranges. Canonical decompositions never change
 * once a character is encoded (Unicode normalization stability), so this is the same on every
 * Node version: accented Latin letters (Latin-1 Supplement, Latin Extended-A and -B, Latin
 * Extended Additional) whose decomposition minus combining marks is one character; ASCII,
 * Latin-1 and General Punctuation characters that are not letters, digits or marks, to a space;
 * and the two noncharacters U+FDD0 and U+FDD1, which the search code uses as highlight sentinels.
 */
function foldMap(): { from: string; to: string } {
  let from = '';
  let to = '';
  for (const [a, b] of [[0x00c0, 0x024f], [0x1e00, 0x1eff]] as const) {
    for (let cp = a; cp <= b; cp++) {
      const ch = String.fromCodePoint(cp);
      const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
      if (base !== ch && base.length === 1) {
        from += ch;
        to += base;
      }
    }
  }
  for (const [a, b] of [[0x0021, 0x007e], [0x00a0, 0x00bf], [0x00d7, 0x00d7], [0x00f7, 0x00f7], [0x2000, 0x206f], [0xfdd0, 0xfdd1]] as const) {
    for (let cp = a; cp <= b; cp++) {
      const ch = String.fromCodePoint(cp);
      if (!/[\p{L}\p{N}\p{M}]/u.test(ch)) {
        from += ch;
        to += ' ';
      }
    }
  }
  return { from, to };
}

/** A PostgreSQL escape-string literal, whatever standard_conforming_strings says. */
function pgLiteral(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

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

function postgresUp(): string[] {
  const { from, to } = foldMap();
  return [
    `create function cairn_search_fold(t text) returns text language sql immutable strict parallel safe
       as $$ select translate(t, ${pgLiteral(from)}, ${pgLiteral(to)}) $$`,
    // Adding a stored generated column rewrites the table, which computes it for every row.
    `alter table contents add column search_vector tsvector generated always as (
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(title, ''))), 'A') ||
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(slug, ''))), 'B') ||
       setweight(to_tsvector('simple', cairn_search_fold(coalesce(body_text, ''))), 'C')
     ) stored`,
    `create index contents_search_idx on contents using gin (search_vector)`,
  ];
}

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  for (const statement of dialect === 'postgres' ? postgresUp() : SQLITE_UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Kysely calls down without the dialect. version() exists on PostgreSQL only, and a failed
  // statement does not abort a SQLite transaction (it would abort a PostgreSQL one).
  const postgres = await sql`select version()`.execute(db).then(() => true, () => false);
  const statements = postgres
    ? ['drop index if exists contents_search_idx', 'alter table contents drop column if exists search_vector', 'drop function if exists cairn_search_fold(text)']
    : ['drop trigger if exists contents_fts_au', 'drop trigger if exists contents_fts_ad', 'drop trigger if exists contents_fts_ai', 'drop table if exists contents_fts'];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
