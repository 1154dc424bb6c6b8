// Format checks for scalar field values.

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const COLOR_RE = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const EMAIL_RE =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const ROOT_RELATIVE_RE = /^\/(?![/\\])[^\s\\]*$/;
const ABSOLUTE_HTTP_RE = /^https?:\/\//i;

export const MAX_EMAIL_LENGTH = 254;
export const MAX_URL_LENGTH = 2048;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** `YYYY-MM-DD` and a real calendar date. */
export function isValidDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  return isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** ISO 8601 date-time with a time and an offset or `Z`, e.g. `2026-02-01T10:30:00Z`, `2026-02-01T10:30+02:00`. */
export function isValidDateTime(value: string): boolean {
  const m = DATETIME_RE.exec(value);
  if (!m) return false;
  if (!isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59) return false;
  if (m[6] !== undefined && Number(m[6]) > 59) return false;
  if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

/** `#rgb`, `#rrggbb` or `#rrggbbaa`. */
export function isValidColor(value: string): boolean {
  return COLOR_RE.test(value);
}

export function isValidEmail(value: string): boolean {
  if (value.length > MAX_EMAIL_LENGTH) return false;
  const at = value.lastIndexOf('@');
  if (at < 1 || at > 64) return false;
  return EMAIL_RE.test(value);
}

/** Absolute http(s) URL, or a root-relative path (`/about`; not `//host`). */
export function isValidUrl(value: string): boolean {
  if (value.length === 0 || value.length > MAX_URL_LENGTH) return false;
  if (value.startsWith('/')) return ROOT_RELATIVE_RE.test(value);
  if (!ABSOLUTE_HTTP_RE.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}
