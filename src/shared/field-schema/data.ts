// Validation of untrusted data against a (valid) field schema.
import { isValidColor, isValidDate, isValidDateTime, isValidEmail, isValidUrl, MAX_EMAIL_LENGTH } from './formats.js';
import { DEFAULT_MAX_STRING_LENGTH, IssueList, hasOwn, isPlainObject, optionValues, type FieldDefinition, type FieldIssue } from './types.js';

/** A field definition or an array's `items` (a definition without a name). Read defensively. */
type ValueDef = Record<string, unknown>;

const MAX_MEDIA_REF_LENGTH = 2048;

/** Quote a value for a message, shortened so that huge inputs do not bloat the response. */
function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}

/**
 * Validate untrusted data against a schema. Returns [] when valid.
 * - `partial`: only the top-level keys present are validated; `required` is not enforced for absent keys.
 *   (A present nested object/array value is validated in full.)
 * - Keys that the schema does not name are orphaned: allowed, not validated.
 * - A value for a dataSource field is refused (read-only).
 */
export function validateFieldData(schema: FieldDefinition[], data: unknown, basePath = 'data', options: { partial?: boolean } = {}): FieldIssue[] {
  const issues = new IssueList();
  validateObject(schema, data, basePath, options.partial === true, issues);
  return issues.list;
}

function validateObject(fields: unknown, data: unknown, path: string, partial: boolean, issues: IssueList): void {
  if (!isPlainObject(data)) {
    issues.add(path, 'must be an object');
    return;
  }
  if (!Array.isArray(fields)) return;
  for (const field of fields as unknown[]) {
    if (issues.full) return;
    if (!isPlainObject(field) || typeof field.name !== 'string') continue;
    const name = field.name;
    const fieldPath = `${path}.${name}`;
    const present = hasOwn(data, name) && data[name] !== undefined;
    if (field.type === 'dataSource') {
      if (present) issues.add(fieldPath, 'is read-only: dataSource fields are resolved on read');
      continue;
    }
    const required = field.required === true;
    if (!present) {
      if (required && !partial) issues.add(fieldPath, 'is required');
      continue;
    }
    const value = data[name];
    if (value === null) {
      if (required) issues.add(fieldPath, 'is required');
      continue;
    }
    if (required && value === '') {
      issues.add(fieldPath, 'is required');
      continue;
    }
    validateValue(field, value, fieldPath, issues);
  }
}

function num(def: ValueDef, key: string): number | undefined {
  const v = def[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function checkString(def: ValueDef, value: unknown, path: string, issues: IssueList): void {
  if (typeof value !== 'string') {
    issues.add(path, 'must be a string');
    return;
  }
  const minLength = num(def, 'minLength');
  const maxLength = num(def, 'maxLength') ?? DEFAULT_MAX_STRING_LENGTH;
  if (minLength !== undefined && value.length < minLength) {
    issues.add(path, `must be at least ${minLength} characters`);
  } else if (value.length > maxLength) {
    issues.add(path, `must be at most ${maxLength} characters`);
  }
}

function checkItemCount(def: ValueDef, count: number, path: string, issues: IssueList): void {
  const minItems = num(def, 'minItems');
  const maxItems = num(def, 'maxItems');
  if (minItems !== undefined && count < minItems) issues.add(path, `must contain at least ${minItems} item(s)`);
  else if (maxItems !== undefined && count > maxItems) issues.add(path, `must contain at most ${maxItems} item(s)`);
}

function checkMedia(value: unknown, path: string, issues: IssueList): void {
  if (typeof value === 'string') {
    if (value.length < 1 || value.length > MAX_MEDIA_REF_LENGTH) {
      issues.add(path, `must be a URL or media id of 1-${MAX_MEDIA_REF_LENGTH} characters`);
    }
    return;
  }
  if (isPlainObject(value)) {
    const id = value.id;
    const url = value.url;
    const okRef = (v: unknown): boolean => typeof v === 'string' && v.length >= 1 && v.length <= MAX_MEDIA_REF_LENGTH;
    if (okRef(id) || okRef(url)) return;
  }
  issues.add(path, 'must be a URL or media id string, or an object with a string "id" or "url"');
}

function validateValue(def: ValueDef, value: unknown, path: string, issues: IssueList): void {
  switch (def.type) {
    case 'string':
    case 'text':
      checkString(def, value, path, issues);
      return;
    case 'richtext':
      if (typeof value === 'string') return;
      if (isPlainObject(value) && value.type === 'doc' && (value.content === undefined || Array.isArray(value.content))) {
        return;
      }
      issues.add(path, 'must be a markdown string or a ProseMirror document ({ "type": "doc", ... })');
      return;
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        issues.add(path, 'must be a finite number');
        return;
      }
      const min = num(def, 'min');
      const max = num(def, 'max');
      if (min !== undefined && value < min) issues.add(path, `must be greater than or equal to ${min}`);
      else if (max !== undefined && value > max) issues.add(path, `must be less than or equal to ${max}`);
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') issues.add(path, 'must be a boolean');
      return;
    case 'select':
      if (typeof value !== 'string') issues.add(path, 'must be a string');
      else if (!optionValues(def.options).has(value)) issues.add(path, `${quote(value)} is not one of the options`);
      return;
    case 'multiselect': {
      if (!Array.isArray(value)) {
        issues.add(path, 'must be an array of option values');
        return;
      }
      const list = value as unknown[];
      checkItemCount(def, list.length, path, issues);
      const allowed = optionValues(def.options);
      const seen = new Set<string>();
      for (let i = 0; i < list.length && !issues.full; i++) {
        const item = list[i];
        const itemPath = `${path}[${i}]`;
        if (typeof item !== 'string') issues.add(itemPath, 'must be a string');
        else if (!allowed.has(item)) issues.add(itemPath, `${quote(item)} is not one of the options`);
        else if (seen.has(item)) issues.add(itemPath, `duplicate value ${quote(item)}`);
        else seen.add(item);
      }
      return;
    }
    case 'image':
    case 'file':
      checkMedia(value, path, issues);
      return;
    case 'url':
      if (typeof value !== 'string' || !isValidUrl(value)) {
        issues.add(path, 'must be an absolute http(s) URL or a root-relative path starting with "/"');
      }
      return;
    case 'email':
      if (typeof value !== 'string' || !isValidEmail(value)) {
        issues.add(path, `must be a valid e-mail address (at most ${MAX_EMAIL_LENGTH} characters)`);
      }
      return;
    case 'date':
      if (typeof value !== 'string' || !isValidDate(value)) issues.add(path, 'must be a valid date (YYYY-MM-DD)');
      return;
    case 'datetime':
      if (typeof value !== 'string' || !isValidDateTime(value)) {
        issues.add(path, 'must be an ISO 8601 date-time with an offset or Z (e.g. 2026-01-31T09:30:00Z)');
      }
      return;
    case 'color':
      if (typeof value !== 'string' || !isValidColor(value)) issues.add(path, 'must be a hex color (#rgb, #rrggbb or #rrggbbaa)');
      return;
    case 'object':
      validateObject(def.fields, value, path, false, issues);
      return;
    case 'array': {
      if (!Array.isArray(value)) {
        issues.add(path, 'must be an array');
        return;
      }
      const list = value as unknown[];
      checkItemCount(def, list.length, path, issues);
      const items = def.items;
      if (!isPlainObject(items)) return;
      for (let i = 0; i < list.length && !issues.full; i++) {
        const item = list[i];
        const itemPath = `${path}[${i}]`;
        if (item === null || item === undefined) issues.add(itemPath, 'must not be null');
        else validateValue(items, item, itemPath, issues);
      }
      return;
    }
    case 'dataSource':
      // Only reachable inside array items, which cannot be dataSource in a valid schema.
      issues.add(path, 'is read-only: dataSource fields are resolved on read');
      return;
    default:
      return;
  }
}
