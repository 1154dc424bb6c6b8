/**
 * URL policy for links and images.
 *
 * - Links (`<a href>`): http, https, mailto, tel, relative URLs (path, query, fragment,
 *   protocol-relative `//host`). Anything else (javascript:, vbscript:, data:, file:, ftp:, ...)
 *   is refused: the link mark is dropped and its text kept.
 * - Images (`<img src>`): http, https or relative only. `data:` URLs are refused entirely, even
 *   `data:image/...` (they bloat stored documents and `data:image/svg+xml` can carry script);
 *   an image whose src is refused is dropped.
 *
 * Browsers ignore ASCII tab/newline anywhere in a URL and strip leading/trailing C0 controls and
 * spaces, so "java\tscript:" is treated as "javascript:". We normalise the same way before looking
 * at the scheme, and we return that cleaned URL for output. URLs longer than 8192 characters
 * are refused.
 */

const LINK_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
const IMAGE_SCHEMES = new Set(['http', 'https']);

const STRIP_ANYWHERE = /[\t\n\r]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

const MAX_URL_LENGTH = 8192;

const isEdgeChar = (c: number): boolean => c <= 0x20 || (c >= 0x7f && c <= 0x9f);

/** Strips C0 controls, space and C1 controls at both ends (what browsers do). */
function trimControls(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isEdgeChar(s.charCodeAt(start))) start++;
  while (end > start && isEdgeChar(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** Cleans a URL and checks it against the allowed schemes; returns null when it is refused. */
function check(raw: unknown, schemes: ReadonlySet<string>): string | null {
  if (typeof raw !== 'string') return null;
  if (raw.length > MAX_URL_LENGTH) return null;
  const url = trimControls(raw.replace(STRIP_ANYWHERE, ''));
  if (url === '') return null;
  // Any remaining control character could be used to disguise a scheme; refuse rather than guess.
  if (CONTROL.test(url)) return null;
  const colon = url.indexOf(':');
  if (colon >= 0) {
    const beforeColon = url.slice(0, colon);
    // A ":" after the first "/", "?" or "#" is part of a relative URL, not a scheme.
    if (!/[/?#]/.test(beforeColon)) {
      const m = SCHEME.exec(url);
      if (!m) return null; // something like " :" or "ja va:": not a clean scheme, refuse
      if (!schemes.has(m[1]!.toLowerCase())) return null;
    }
  }
  return url;
}

export function safeLinkHref(raw: unknown): string | null {
  return check(raw, LINK_SCHEMES);
}

export function safeImageSrc(raw: unknown): string | null {
  return check(raw, IMAGE_SCHEMES);
}
