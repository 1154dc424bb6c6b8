/**
 * Search highlights (decisions C4, HN6, HN15): a title with every matching word marked, and a
 * body excerpt of SNIPPET_TOKENS words around its first hits, as HTML with `<mark>`. This module
 * imports nothing: SQLite statements call it as SQL functions (`cairn_title_html`,
 * `cairn_excerpt_html`), and the search reader thread loads it by its URL, with no bundler or
 * loader (src/db/sqlite-functions.ts), so excerpts of long posts are made off the event loop.
 */

/** A search term: a word, matched whole or as a prefix. */
export interface Term {
  text: string;
  prefix: boolean;
}

/** Noncharacters (reserved for internal use): the highlight markers before escaping. Folded to spaces on PostgreSQL. */
export const OPEN = '\uFDD0';
export const CLOSE = '\uFDD1';
export const SNIPPET_TOKENS = 24;
export const ELLIPSIS = '…';

/** This module, for the threads that load it by themselves. */
export const EXCERPT_MODULE = import.meta.url;

/** Text as HTML (the same escape as shared/richtext's `escapeHtml`; this module imports nothing). */
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

/**
 * Text with OPEN/CLOSE markers into HTML: every piece escaped, markers as `<mark>`/`</mark>`,
 * balanced whatever the text holds (a marker character stored in a title cannot leave a tag
 * open). Runs of white space become one space.
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
      if (!open) {
        flush();
        out += '<mark>';
        open = true;
      }
    } else if (ch === CLOSE) {
      if (open) {
        flush();
        out += '</mark>';
        open = false;
      }
    } else piece += ch;
  }
  flush();
  if (open) out += '</mark>';
  return out.replace(/<mark><\/mark>/g, '');
}

/** Letters, digits and marks: the words of SQLite's unicode61 tokenizer, near enough for excerpts. */
export const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
/** How a word is compared with a term: case and diacritics folded, as `remove_diacritics 2` does. */
const foldWord = (w: string) => (ASCII.test(w) ? w.toLowerCase() : w.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase());
/** A word of ASCII letters and digits has nothing to fold but case. */
const ASCII = /^[0-9A-Za-z]*$/;
/** Hits looked at to choose the excerpt: the body's first ones are enough to find a window with every term. */
const EXCERPT_HITS = 64;

/** The whole text with OPEN/CLOSE around every word that matches a term (a title). */
export function markTerms(text: string, terms: Term[]): string {
  const match = termMatcher(terms);
  return text.replace(WORD, (word) => (match(word) >= 0 ? `${OPEN}${word}${CLOSE}` : word));
}

/** The terms folded as words are (foldWord), to compare with folded words. */
const foldTerms = (terms: Term[]): Term[] => terms.map((t) => ({ text: foldWord(t.text), prefix: t.prefix }));
/** Whether a folded word matches a folded term: as a prefix, or whole. */
const matchesWord = (t: Term, w: string) => (t.prefix ? w.startsWith(t.text) : w === t.text);

/** Which term (its index) a word matches, or -1. */
export function termMatcher(terms: Term[]): (word: string) => number {
  const folded = foldTerms(terms);
  if (!folded.length) return () => -1;
  return (word) => {
    const w = foldWord(word);
    return folded.findIndex((t) => matchesWord(t, w));
  };
}

/**
 * The body excerpt (decisions HN6): SNIPPET_TOKENS words around the body's first hits, with
 * OPEN/CLOSE around every word that matches a term, `…` where the body is cut. FTS5's snippet()
 * did this in SQL, but it scores a window at every hit against every other hit: 0.4 s for one
 * 20 KB body full of words starting with `a`, 6 s for a page of fifty 60 KB posts (`q=a`), all
 * of it one statement on the event loop. This reads the words once, up to a window's worth past
 * the first hit of every term (or EXCERPT_HITS hits), and chooses the window holding the most distinct terms (the earliest of equals),
 * centred on its hits as FTS5 does.
 */
export function bodyExcerpt(text: string, terms: Term[]): string {
  if (!text) return '';
  const from = scanStart(text, terms);
  // No hit: the excerpt is the first SNIPPET_TOKENS words, and one more tells whether it is cut.
  return from === NO_HIT ? excerptFrom(text, [], 0, SNIPPET_TOKENS + 1) : excerptFrom(text, terms, from);
}

/** scanStart's answer for ASCII text where no word matches a term (a post found by its title). */
const NO_HIT = -1;

/** Words kept before the first hit: a window starts at most this many words before it (see excerptFrom). */
const WORDS_BEFORE_HIT = SNIPPET_TOKENS;
/** Text with nothing to fold but case, so its words can be found by a case-blind search for the terms. */
// A character class, not \p{ASCII} with the u flag: the same strings, tested in half the time
// (a search past the cap tests a thousand titles, decisions HN22).
const ASCII_TEXT = /^[\0-\x7f]*$/;
/** An ASCII word character (WORD, within ASCII). */
const ASCII_WORD = /[0-9A-Za-z]/;
/** A folded term that can match a word of ASCII text. */
const ASCII_TERM = /^[0-9a-z]+$/;
/** Such a term as a case-blind pattern: at a word's start, and to its end unless a prefix. */
const asciiTermPattern = (t: Term) => `(?<![0-9A-Za-z])${t.text}${t.prefix ? '' : '(?![0-9A-Za-z])'}`;
/** The case-blind finder of the terms' first hit in ASCII text, made once per terms array. */
let lastFinder: { terms: Term[]; finder: RegExp | null } = { terms: [], finder: null };

function finderOf(terms: Term[]): RegExp | null {
  if (lastFinder.terms === terms) return lastFinder.finder;
  // Folded as excerptFrom folds them (so `Über` looks for `uber`); one still outside ASCII
  // matches no word of ASCII text.
  const words = foldTerms(terms).filter((t) => ASCII_TERM.test(t.text));
  const finder = words.length ? new RegExp(words.map(asciiTermPattern).join('|'), 'i') : null;
  lastFinder = { terms, finder };
  return finder;
}

/**
 * Whether every term matches a word of a text (a candidate's tier past the search cap, MP6). ASCII
 * text is searched with one case-blind expression per term and allocates nothing; other text is
 * read word by word. A thousand titles and slugs went through arrays and sets for every search
 * past the cap, on the event loop (decisions HN22).
 */
export function allTermsMatcher(terms: Term[]): (text: string) => boolean {
  const folded = foldTerms(terms);
  const finders = folded.map((t) => (ASCII_TERM.test(t.text) ? new RegExp(asciiTermPattern(t), 'i') : null));
  return (text) => {
    if (ASCII_TEXT.test(text)) return finders.every((f) => f?.test(text) === true);
    const matched = folded.map(() => false);
    WORD.lastIndex = 0;
    for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) {
      const w = foldWord(m[0]);
      folded.forEach((t, i) => {
        if (matchesWord(t, w)) matched[i] = true;
      });
    }
    return matched.every(Boolean);
  };
}

/**
 * Where the word scan of an excerpt may start: in ASCII text (case is all there is to fold), a
 * case-blind search finds the first hit, and the scan starts WORDS_BEFORE_HIT words before it
 * instead of at the first word, or NO_HIT. Every word before the first hit was folded, and a body
 * without one (a post found by its title) was folded whole: most of a search's time on the
 * reader thread (decisions HN21). Anywhere else, 0.
 */
function scanStart(text: string, terms: Term[]): number {
  const finder = finderOf(terms);
  if (!finder || !ASCII_TEXT.test(text)) return 0;
  const hit = finder.exec(text)?.index;
  if (hit === undefined) return NO_HIT;
  // Back WORDS_BEFORE_HIT whole words (and the one they may cut) from the hit.
  let at = hit;
  for (let words = 0; at > 0; ) {
    while (at > 0 && !ASCII_WORD.test(text[at - 1]!)) at--;
    if (at === 0 || words === WORDS_BEFORE_HIT) break;
    while (at > 0 && ASCII_WORD.test(text[at - 1]!)) at--;
    words++;
  }
  return at;
}

/**
 * bodyExcerpt with the word scan starting at `from`: 0, or a place with a word before it and
 * WORDS_BEFORE_HIT words or more before the first hit. A window starts at most SNIPPET_TOKENS - 1
 * words before the first hit (that far only when the body ends within SNIPPET_TOKENS words), so
 * it never reaches back past `from`: the excerpt is the one a scan from the first word makes.
 * `maxWords`: stop after that many words (for no terms, see bodyExcerpt). Exported for the test
 * that compares the two.
 */
export function excerptFrom(text: string, terms: Term[], from: number, maxWords = Number.POSITIVE_INFINITY): string {
  const termOf = termMatcher(terms);
  const words: Array<{ start: number; end: number; term: number }> = [];
  const hits: number[] = [];
  let scannedAll = true;
  const found = new Set<number>();
  // Words before `from` (scanStart starts past the first only): the excerpt starts with an ellipsis.
  const wordsBefore = from > 0;
  // exec on the one WORD regex, not matchAll: matchAll copies the regex, and a copy of a Unicode
  // property class is compiled again on first use (0.1-0.6 ms a body, most of a page of excerpts).
  WORD.lastIndex = from;
  for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) {
    const term = termOf(m[0]);
    words.push({ start: m.index, end: m.index + m[0].length, term });
    if (term >= 0) {
      hits.push(words.length - 1);
      found.add(term);
    }
    // Every term found (or enough hits looked at), and words enough to centre a window on the last hit.
    if ((found.size === terms.length || hits.length >= EXCERPT_HITS) && hits.length > 0 && words.length - 1 - hits[hits.length - 1]! >= SNIPPET_TOKENS) {
      scannedAll = false;
      break;
    }
    // Without terms, words past the first SNIPPET_TOKENS + 1 change nothing (the cut is known).
    if (words.length >= maxWords) break;
  }
  if (words.length === 0) return '';
  let first = 0;
  if (hits.length > 0) {
    let best = { from: hits[0]!, to: hits[0]!, distinct: 0 };
    for (const h of hits) {
      const seen = new Set<number>();
      let to = h;
      for (let i = h; i < Math.min(words.length, h + SNIPPET_TOKENS); i++) {
        if (words[i]!.term >= 0) {
          seen.add(words[i]!.term);
          to = i;
        }
      }
      if (seen.size > best.distinct) best = { from: h, to, distinct: seen.size };
      if (seen.size === terms.length) break;
    }
    first = Math.max(0, best.from - Math.floor((SNIPPET_TOKENS - (best.to - best.from + 1)) / 2));
  }
  if (scannedAll && words.length - first < SNIPPET_TOKENS) first = Math.max(0, words.length - SNIPPET_TOKENS);
  const last = Math.min(words.length, first + SNIPPET_TOKENS) - 1;
  let out = first === 0 && !wordsBefore ? text.slice(0, words[0]!.start) : ELLIPSIS;
  for (let i = first; i <= last; i++) {
    const w = words[i]!;
    if (i > first) out += text.slice(words[i - 1]!.end, w.start);
    const word = text.slice(w.start, w.end);
    out += w.term >= 0 ? `${OPEN}${word}${CLOSE}` : word;
  }
  const cutAtEnd = last < words.length - 1 || !scannedAll;
  return out + (cutAtEnd ? ELLIPSIS : text.slice(words[last]!.end));
}

/** The terms of the last call, parsed once: every row of a statement passes the same JSON. */
let lastTerms = { json: '', terms: [] as Term[] };
function termsOf(json: string): Term[] {
  if (json !== lastTerms.json) lastTerms = { json, terms: JSON.parse(json) as Term[] };
  return lastTerms.terms;
}

/** The tier matcher of the last terms (every row of a statement passes the same terms). */
let lastTier: { terms: Term[]; holdsAll: (text: string) => boolean } = { terms: [], holdsAll: () => false };

/**
 * SQL `cairn_search_tier(title, slug, terms)`: 0 when every term matches a word of the title, 1
 * of the title or the slug (its hyphens as spaces), else 2 (a candidate's tier past the search
 * cap, MP6).
 */
export function searchTier(title: string | null, slug: string | null, terms: string): number {
  const parsed = termsOf(terms);
  if (lastTier.terms !== parsed) lastTier = { terms: parsed, holdsAll: allTermsMatcher(parsed) };
  const t = title ?? '';
  if (lastTier.holdsAll(t)) return 0;
  // A hyphen ends a word as the space does (WORD, and ASCII terms' boundaries), so the slug is read as it is.
  return lastTier.holdsAll(`${t} ${slug ?? ''}`) ? 1 : 2;
}

/** SQL `cairn_title_html(title, terms)`: the whole title as HTML, matched words marked; `terms` is the JSON of a Term[]. */
export function titleHtml(title: string | null, terms: string): string {
  return markedToHtml(markTerms(title ?? '', termsOf(terms)));
}

/** SQL `cairn_excerpt_html(body, terms)`: the body excerpt as HTML (bodyExcerpt). */
export function excerptHtml(body: string | null, terms: string): string {
  return markedToHtml(bodyExcerpt(body ?? '', termsOf(terms)));
}
