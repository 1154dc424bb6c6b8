import { Type } from 'typebox';
import { common, fieldMap } from '../../kit/fields.js';
import { translatableResource } from '../../kit/translatable.js';
import { Nullable } from '../../shared/schemas.js';
import { CALENDAR_FORMAT, KEY_PATTERN, type VariableType, valueFor } from './variables.calendar.js';
import './variables.repository.js';

const VariableTypeSchema = Type.Union([Type.Literal('text'), Type.Literal('calendar')], {
  description: '`text`: a plain string; `calendar`: a JSON list of dated entries (see `value`)',
});
const KeyFilter = Type.String({ minLength: 1, maxLength: 100 });

/** Spec "Variable": keys unique per site and locale and immutable; text or calendar values; translatable. */
export const variableFields = fieldMap({
  id: common.id,
  key: {
    column: 'key',
    schema: Type.String(),
    input: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: KEY_PATTERN,
      description: 'A letter, then letters, digits, `_`, `.` or `-`; unique per site and locale; cannot be changed after creation (422 `KEY_IMMUTABLE`)',
    }),
    create: 'required',
    immutable: 'KEY_IMMUTABLE',
  },
  label: { column: 'label', schema: Type.String(), input: Type.String({ minLength: 1, maxLength: 255 }), create: 'required', translated: true },
  value: {
    column: 'value',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 100_000, description: `1-100000 characters. ${CALENDAR_FORMAT}` }),
    create: 'required',
    translated: true,
  },
  type: { column: 'type', schema: VariableTypeSchema, input: VariableTypeSchema, insertDefault: 'text' },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 500 })), translated: true },
  locale: common.locale,
  translationGroup: common.translationGroup,
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const variables = translatableResource({
  table: 'variables',
  noun: 'variable',
  name: 'Variable',
  plural: 'Variables',
  path: '/variables',
  scope: 'variables',
  fields: variableFields,
  list: {
    sort: ['created_at', 'updated_at', 'key', 'label'],
    search: ['key', 'label', 'value', 'description'],
    // Variables have no slug: the shared filters but slug and slugs.
    common: ['search', 'ids', 'excludeIds', 'locale', 'translationGroup'],
    filters: {
      type: Type.Optional(VariableTypeSchema),
      key: Type.Optional({ ...KeyFilter, description: 'Exactly this key' }),
      keys: Type.Optional(Type.Array(KeyFilter, { maxItems: 100, description: 'Any of these keys (`keys[]=a&keys[]=b`)' })),
    },
    apply(qb, query: { type?: VariableType; key?: string; keys?: string[] }) {
      if (query.type) qb = qb.where('type', '=', query.type);
      if (query.key) qb = qb.where('key', '=', query.key);
      if (query.keys?.length) qb = qb.where('key', 'in', query.keys);
      return qb;
    },
  },
  unique: [{ field: 'key', code: 'KEY_TAKEN', onCopy: 'refuse' }],
  rules: {
    /** A calendar value is checked and stored normalized; text is kept as sent. */
    create(_tx, { row }) {
      row.value = valueFor(row.type, row.value);
    },
    /** The resulting pair is what must hold: a new value, or an old value under a new type. */
    update(_tx, { current, input, patch }) {
      if (input.value !== undefined || input.type !== undefined) patch.value = valueFor(input.type ?? current.type, input.value ?? current.value);
    },
  },
  docs: {
    create: { description: `\`key\` is unique per site and locale (422 \`KEY_TAKEN\`) and cannot be changed later. ${CALENDAR_FORMAT}` },
    update: {
      description:
        'The key is immutable: a `key` other than the stored one is a 422 `KEY_IMMUTABLE`. A calendar value is checked again when `value` or `type` changes.',
    },
    copyToLocale: {
      summary: 'Copy into another locale (same key, same translation group)',
      description:
        'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale; 422 `KEY_TAKEN` when another variable holds the key there.',
    },
  },
});
