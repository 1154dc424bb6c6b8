import { Type } from 'typebox';
import { Locale, Nullable } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';

/** Free JSON object: checked against the single type's field schema when it has one. */
export const DataObject = Type.Object({}, { additionalProperties: true, description: 'Structured data; validated against `schema` when one is set' });
export const FieldDefinition = Type.Object({}, { additionalProperties: true, description: 'A field definition `{ name, type, label?, required?, ... }`' });
export const Doc = Type.Object(
  { type: Type.String() },
  { additionalProperties: true, description: 'ProseMirror (TipTap) document JSON `{ "type": "doc", "content": [...] }`' },
);

export const Meta = Type.Object({
  metaTitle: Nullable(Type.String()),
  metaDescription: Nullable(Type.String()),
});

export const SingleTypeParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 100 }) });

export const SingleTypeLocaleQuery = Type.Object({
  locale: Type.Optional({ ...Locale, description: "The locale of the single type (default: the site's default locale)" }),
});

export const Slug = Type.String({ minLength: 1, maxLength: 100, pattern: SLUG_PATTERN, description: 'Lower-case letters, digits and hyphens; permanent' });

/** `[...]` or `{ fields: [...] }`; null removes the schema (and so its validation). */
const FieldSchemaInput = Type.Union([Type.Array(FieldDefinition), Type.Object({ fields: Type.Array(FieldDefinition) }), Type.Null()], {
  description: 'Field definitions (17 types, at most 250 per level and 5 levels); `data` is validated against them',
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Nullable(Type.String({ maxLength: 1000 })),
  data: DataObject,
  schema: FieldSchemaInput,
  body: Type.Unknown({
    description:
      'Rich-text body as ProseMirror (TipTap) document JSON `{ "type": "doc", "content": [...] }`; null for none. Send `body` or `bodyMarkdown`, not both',
  }),
  bodyMarkdown: Nullable(Type.String({ description: 'Rich-text body as markdown (CommonMark, GFM tables, strikethrough); converted to `body` on save' })),
  meta: Type.Object({
    metaTitle: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    metaDescription: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  }),
};

export const SingleTypeCreate = Type.Object({
  slug: Slug,
  name: fields.name,
  description: Type.Optional(fields.description),
  data: Type.Optional({ ...fields.data, description: 'Required unless `body` or `bodyMarkdown` is given (then it defaults to `{}`)' }),
  schema: Type.Optional(fields.schema),
  body: Type.Optional(fields.body),
  bodyMarkdown: Type.Optional(fields.bodyMarkdown),
  meta: Type.Optional(fields.meta),
  locale: Type.Optional(Locale),
});

export const SingleTypeUpdate = Type.Object(
  {
    slug: Type.Optional(Type.String({ description: 'Permanent: accepted only when equal to the current slug' })),
    name: Type.Optional(fields.name),
    description: Type.Optional(fields.description),
    data: Type.Optional({ ...fields.data, description: 'Replaces the whole data object' }),
    schema: Type.Optional(fields.schema),
    body: Type.Optional(fields.body),
    bodyMarkdown: Type.Optional(fields.bodyMarkdown),
    meta: Type.Optional({ ...fields.meta, description: 'Merged: only the keys sent change' }),
  },
  { minProperties: 1 },
);
