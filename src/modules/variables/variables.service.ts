import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/types.js';
import type { DialectName } from '../../db/connect.js';
import { now } from '../../db/json.js';
import { invalid, issuesError, notFound } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { getSiteLocales, resolveLocale } from '../sites/sites.service.js';
import { assertLocaleFree, copyTargetLocale, groupMembers, newTranslationGroup, translationStatus } from '../../shared/translations/index.js';
import * as repo from './variables.repository.js';
import { CALENDAR_MAX_ENTRIES, type VariableCreate, type VariableListQuery, type VariableType, type VariableUpdate } from './variables.schemas.js';

type VariableRow = repo.VariableRow;

function toVariable(r: VariableRow) {
  return {
    id: Number(r.id),
    key: r.key,
    label: r.label,
    value: r.value,
    type: r.type,
    description: r.description,
    locale: r.locale,
    translationGroup: r.translation_group,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

async function getRow(db: Executor, siteId: string, id: number): Promise<VariableRow> {
  const row = await repo.findVariable(db, siteId, id);
  if (!row) throw notFound('variable');
  return row;
}

/** Keys are unique per site and locale (spec "Variable"); the unique index is the safety net for races. */
async function assertKeyFree(db: Executor, siteId: string, locale: string, key: string, exceptId?: number) {
  if (await repo.keyTaken(db, siteId, locale, key, exceptId)) {
    throw invalid('KEY_TAKEN', 'key', `The key "${key}" is already used in ${locale}.`);
  }
}

// ---------------------------------------------------------------------------------------------
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
function valueFor(type: VariableType, value: string): string {
  return type === 'calendar' ? normalizeCalendar(value) : value;
}

// ---------------------------------------------------------------------------------------------

export async function listVariables(db: Executor, dialect: DialectName, siteId: string, query: Static<typeof VariableListQuery>) {
  const { rows, total } = await repo.listVariables(db, dialect, siteId, query);
  return { data: rows.map(toVariable), meta: pageMeta(total, query.page, query.limit) };
}

export async function getVariable(db: Executor, siteId: string, id: number) {
  return toVariable(await getRow(db, siteId, id));
}

export async function createVariable(db: Db, siteId: string, input: Static<typeof VariableCreate>) {
  const locales = await getSiteLocales(db, siteId);
  const locale = resolveLocale(locales, input.locale);
  const type = input.type ?? 'text';
  const value = valueFor(type, input.value);
  return db.transaction().execute(async (tx) => {
    await assertKeyFree(tx, siteId, locale, input.key);
    let group = input.translationGroup;
    if (group) await assertLocaleFree(tx, 'variables', siteId, group, locale);
    else group = newTranslationGroup();
    const at = now();
    const id = await repo.insertVariable(tx, {
      site_id: siteId,
      key: input.key,
      label: input.label,
      value,
      type,
      description: input.description ?? null,
      locale,
      translation_group: group,
      created_at: at,
      updated_at: at,
    });
    return getVariable(tx, siteId, id);
  });
}

/** Partial update; the key is immutable (spec "PUT /variables/:id"): sending the stored key is fine, another is a 422. */
export async function updateVariable(db: Db, siteId: string, id: number, input: Static<typeof VariableUpdate>) {
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    if (input.key !== undefined && input.key !== row.key) {
      throw invalid('KEY_IMMUTABLE', 'key', `The key of a variable cannot be changed (it is "${row.key}").`);
    }
    const type = input.type ?? row.type;
    // The resulting pair is what must hold: a new value, or an old value under a new type.
    const value = input.value !== undefined || input.type !== undefined ? valueFor(type, input.value ?? row.value) : undefined;
    await repo.updateVariable(tx, siteId, id, {
      label: input.label,
      value,
      type: input.type,
      description: input.description,
      updated_at: now(),
    });
    return getVariable(tx, siteId, id);
  });
}

export async function deleteVariable(db: Db, siteId: string, id: number) {
  if (!(await repo.deleteVariable(db, siteId, id))) throw notFound('variable');
}

export async function variableTranslations(db: Executor, siteId: string, id: number) {
  const row = await getRow(db, siteId, id);
  const { enabledLocales } = await getSiteLocales(db, siteId);
  const members = await groupMembers<VariableRow>(db, 'variables', siteId, row.translation_group);
  const fields = (r: VariableRow) => ({ label: r.label, value: r.value, description: r.description });
  return translationStatus(
    { locale: row.locale, fields: fields(row) },
    members.map((m) => ({ locale: m.locale, fields: fields(m) })),
    enabledLocales,
  );
}

/**
 * A copy under the same key in the target locale and the same group (decisions G10): 409 when
 * the group has a member there; 422 KEY_TAKEN when another variable already holds the key there.
 */
export async function copyVariableToLocale(db: Db, siteId: string, id: number, body: { targetLocale?: string; locale?: string }) {
  const locales = await getSiteLocales(db, siteId);
  const target = copyTargetLocale(locales, body);
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, id);
    await assertLocaleFree(tx, 'variables', siteId, row.translation_group, target);
    await assertKeyFree(tx, siteId, target, row.key);
    const at = now();
    const newId = await repo.insertVariable(tx, {
      site_id: siteId,
      key: row.key,
      label: row.label,
      value: row.value,
      type: row.type,
      description: row.description,
      locale: target,
      translation_group: row.translation_group,
      created_at: at,
      updated_at: at,
    });
    return getVariable(tx, siteId, newId);
  });
}
