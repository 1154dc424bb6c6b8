import { Type } from 'typebox';
import { CommonFilters } from '../../shared/list-filters.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { Locale, Nullable, Timestamp } from '../../shared/schemas.js';

export const VARIABLE_TYPES = ['text', 'calendar'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export const KEY_PATTERN = '^[A-Za-z][A-Za-z0-9_.-]*$';
export const CALENDAR_MAX_ENTRIES = 1000;

/** The calendar format, once, for the OpenAPI document (the spec leaves it open; see docs/decisions.md). */
export const CALENDAR_FORMAT =
  'With `type: calendar`, `value` is a JSON string holding a list of at most ' +
  CALENDAR_MAX_ENTRIES +
  ' entries ' +
  '`{ "date": "YYYY-MM-DD", "endDate"?: "YYYY-MM-DD", "label": "...", "color"?: "#rgb" | "#rrggbb" }`: ' +
  '`date` a real calendar date (required), `endDate` on or after `date`, `label` 1-255 characters (required), ' +
  '`color` a hex color; no other keys. It is stored normalized (parsed and serialized again, keys in this order), ' +
  'so reads return compact JSON. An invalid value is a 422 `CALENDAR_INVALID` naming the path, e.g. `value[2].date`.';

const VariableTypeSchema = Type.Union([Type.Literal('text'), Type.Literal('calendar')], {
  description: '`text`: a plain string; `calendar`: a JSON list of dated entries (see `value`)',
});

const Key = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: KEY_PATTERN,
  description: 'A letter, then letters, digits, `_`, `.` or `-`; unique per site and locale; cannot be changed after creation',
});
const Label = Type.String({ minLength: 1, maxLength: 255 });
const Value = Type.String({ minLength: 1, maxLength: 100_000, description: `1-100000 characters. ${CALENDAR_FORMAT}` });
const Description = Nullable(Type.String({ maxLength: 500 }));

export const Variable = Type.Object({
  id: Type.Integer(),
  key: Type.String(),
  label: Type.String(),
  value: Type.String(),
  type: VariableTypeSchema,
  description: Nullable(Type.String()),
  locale: Type.String(),
  translationGroup: Type.String({ format: 'uuid' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const VariableCreate = Type.Object({
  type: Type.Optional({ ...VariableTypeSchema, default: 'text' }),
  key: Key,
  label: Label,
  value: Value,
  description: Type.Optional(Description),
  locale: Type.Optional(Locale),
  translationGroup: Type.Optional(Type.String({ format: 'uuid', description: 'Join an existing translation group' })),
});

export const VariableUpdate = Type.Object(
  {
    key: Type.Optional({ ...Key, description: 'Accepted only when equal to the stored key (422 `KEY_IMMUTABLE` otherwise)' }),
    label: Type.Optional(Label),
    value: Type.Optional(Value),
    description: Type.Optional(Description),
    type: Type.Optional(VariableTypeSchema),
  },
  { minProperties: 1 },
);

const KeyFilter = Type.String({ minLength: 1, maxLength: 100 });

/** The shared filters minus slug and slugs (variables have no slug), plus the variables' own. */
export const VariableListQuery = listQuerySchema(
  ['created_at', 'updated_at', 'key', 'label'],
  {
    search: Type.Optional({ ...CommonFilters.search, description: 'Case-insensitive text search in key, label, value and description' }),
    ids: CommonFilters.ids,
    excludeIds: CommonFilters.excludeIds,
    locale: CommonFilters.locale,
    translationGroup: CommonFilters.translationGroup,
    type: Type.Optional(VariableTypeSchema),
    key: Type.Optional({ ...KeyFilter, description: 'Exactly this key' }),
    keys: Type.Optional(Type.Array(KeyFilter, { maxItems: 100, description: 'Any of these keys (`keys[]=a&keys[]=b`)' })),
  },
  { defaultSort: 'created_at desc' },
);
