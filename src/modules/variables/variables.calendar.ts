import { issuesError } from '../../shared/errors.js';

export const VARIABLE_TYPES = ['text', 'calendar'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];
export const KEY_PATTERN = '^[A-Za-z][A-Za-z0-9_.-]*$';
export const CALENDAR_MAX_ENTRIES = 1000;

/** The calendar format, once, for the OpenAPI document (the spec leaves it open; see docs/decisions.md). */
export const CALENDAR_FORMAT =
  `With \`type: calendar\`, \`value\` is a JSON string holding a list of at most ${CALENDAR_MAX_ENTRIES} entries ` +
  '`{ "date": "YYYY-MM-DD", "endDate"?: "YYYY-MM-DD", "label": "...", "color"?: "#rgb" | "#rrggbb" }`: ' +
  '`date` a real calendar date (required), `endDate` on or after `date`, `label` 1-255 characters (required), ' +
  '`color` a hex color; no other keys. It is stored normalized (parsed and serialized again, keys in this order), ' +
  'so reads return compact JSON. An invalid value is a 422 `CALENDAR_INVALID` naming the path, e.g. `value[2].date`.';

// Calendar values (spec: "The internal format of a calendar value: not shown"; docs/decisions.md)

export interface CalendarEntry {
  date: string;
  endDate?: string;
  label: string;
  color?: string;
}

const ENTRY_KEYS = new Set(['date', 'endDate', 'label', 'color']);
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const COLOR_RE = /^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;
/** At most this many issues are reported for one value, so a broken 1000-entry list stays a readable 422. */
const MAX_ISSUES = 50;

function isRealDate(s: string): boolean {
  if (!DATE_RE.test(s)) return false;
  const d = new Date(`${s}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Characters as JSON Schema (and so the `maxLength` of every other field) counts them: code points. */
function charCount(s: string): number {
  return [...s].length;
}

/**
 * Parses and checks a calendar value; returns its normalized text (compact JSON, entry keys in
 * the order date, endDate, label, color) or throws 422 CALENDAR_INVALID with one path per issue.
 */
export function normalizeCalendar(value: string, field = 'value'): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw issuesError('CALENDAR_INVALID', [{ path: field, message: 'must be valid JSON: a list of calendar entries' }]);
  }
  if (!Array.isArray(parsed)) throw issuesError('CALENDAR_INVALID', [{ path: field, message: 'must be a JSON list of calendar entries' }]);
  if (parsed.length > CALENDAR_MAX_ENTRIES) {
    throw issuesError('CALENDAR_INVALID', [{ path: field, message: `must have at most ${CALENDAR_MAX_ENTRIES} entries` }]);
  }
  const issues: Array<{ path: string; message: string }> = [];
  const entries: CalendarEntry[] = [];
  parsed.forEach((item: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      issues.push({ path: at, message: 'must be an object { date, endDate?, label, color? }' });
      return;
    }
    const e = item as Record<string, unknown>;
    for (const k of Object.keys(e)) if (!ENTRY_KEYS.has(k)) issues.push({ path: `${at}.${k}`, message: 'is not allowed' });
    if (e.date === undefined) issues.push({ path: `${at}.date`, message: 'is required' });
    else if (typeof e.date !== 'string' || !isRealDate(e.date)) issues.push({ path: `${at}.date`, message: 'must be a real date as YYYY-MM-DD' });
    if (e.endDate !== undefined) {
      if (typeof e.endDate !== 'string' || !isRealDate(e.endDate)) issues.push({ path: `${at}.endDate`, message: 'must be a real date as YYYY-MM-DD' });
      else if (typeof e.date === 'string' && isRealDate(e.date) && e.endDate < e.date)
        issues.push({ path: `${at}.endDate`, message: 'must not be before date' });
    }
    if (e.label === undefined) issues.push({ path: `${at}.label`, message: 'is required' });
    else if (typeof e.label !== 'string' || e.label === '' || charCount(e.label) > 255)
      issues.push({ path: `${at}.label`, message: 'must be a string of 1-255 characters' });
    if (e.color !== undefined && (typeof e.color !== 'string' || !COLOR_RE.test(e.color)))
      issues.push({ path: `${at}.color`, message: 'must be a hex color #rgb or #rrggbb' });
    entries.push({
      date: e.date as string,
      ...(e.endDate !== undefined ? { endDate: e.endDate as string } : {}),
      label: e.label as string,
      ...(e.color !== undefined ? { color: e.color as string } : {}),
    });
  });
  if (issues.length) throw issuesError('CALENDAR_INVALID', issues.slice(0, MAX_ISSUES));
  return JSON.stringify(entries);
}

/** The value to store for a type: calendars are checked and normalized, text is kept as sent. */
export function valueFor(type: VariableType, value: string): string {
  return type === 'calendar' ? normalizeCalendar(value) : value;
}
