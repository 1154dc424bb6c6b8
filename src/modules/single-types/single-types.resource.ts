import { Type } from 'typebox';
import { parseJson, toJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import { common, fieldMap } from '../../kit/fields.js';
import { resource } from '../../kit/resource.js';
import { invalid, issuesError } from '../../shared/errors.js';
import { type FieldDefinition, fieldSchemaFromInput, validateFieldData } from '../../shared/field-schema/index.js';
import { CommonFilters } from '../../shared/list-filters.js';
import { canonicalLocale } from '../../shared/locales.js';
import type { RenderedBody } from '../../shared/richtext/index.js';
import { renderRichText } from '../../shared/richtext/render-pool.js';
import { Nullable } from '../../shared/schemas.js';
import { getSiteLocales, resolveLocale } from '../../shared/site-locales.js';
import './single-types.repository.js';
import {
  DataObject,
  Doc,
  FieldDefinition as FieldDefinitionSchema,
  Meta,
  SingleTypeCreate,
  SingleTypeLocaleQuery,
  SingleTypeParams,
  SingleTypeUpdate,
  Slug,
} from './single-types.schemas.js';

/** Spec "Single type": the response built from one field map; the list shows the summary fields. The bodies are hand-written (single-types.schemas.ts). */
export const singleTypeFields = fieldMap({
  slug: { column: 'slug', schema: Type.String(), input: Slug, create: 'required', update: false },
  name: { column: 'name', schema: Type.String(), input: Type.String() },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String()), summary: false },
  locale: { ...common.locale, input: Type.String(), update: false },
  data: { column: 'data', schema: DataObject, read: (v) => parseJson<Record<string, unknown>>(v, {}), summary: false },
  schema: { column: 'schema', schema: Nullable(Type.Array(FieldDefinitionSchema)), read: (v) => parseJson(v, null), summary: false },
  body: { column: 'body', schema: Nullable(Doc), read: (v) => parseJson(v, null), summary: false },
  bodyHtml: {
    column: 'body_html',
    schema: Type.String({ description: 'Sanitized HTML rendered from `body` on write; empty when there is no body' }),
    summary: false,
  },
  meta: {
    schema: Meta,
    from: (r) => ({ metaTitle: r.meta_title, metaDescription: r.meta_description }),
    columns: ['meta_title', 'meta_description'],
    summary: false,
  },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

/**
 * The locale a read, update or delete addresses: the site's default when omitted. A locale that
 * is not (or no longer) enabled is not refused here: the record is simply looked up, so that
 * records left in a disabled locale can still be read and deleted.
 */
async function addressedLocale(db: Executor, siteId: string, input: string | undefined): Promise<string> {
  if (input === undefined || input === '') return (await getSiteLocales(db, siteId)).defaultLocale;
  const canonical = canonicalLocale(input);
  if (!canonical) throw invalid('LOCALE_INVALID', 'locale');
  return canonical;
}

/** `[...]` or `{ fields: [...] }` -> validated, normalised definitions (422 SCHEMA_INVALID with paths like `schema[0].type`). */
function parseSchemaInput(input: unknown): FieldDefinition[] | null {
  const parsed = fieldSchemaFromInput(input);
  if (!parsed.ok) throw issuesError('SCHEMA_INVALID', parsed.issues);
  return parsed.schema;
}

/** 422 DATA_INVALID with paths like `data.title` when the data does not match the schema. */
function checkData(schema: FieldDefinition[] | null, data: Record<string, unknown>): void {
  if (!schema) return;
  const issues = validateFieldData(schema, data, 'data');
  if (issues.length) throw issuesError('DATA_INVALID', issues);
}

/** `body` or `bodyMarkdown` -> the rendered body; null when neither is given (422 BODY_INVALID when invalid). */
async function renderBody(input: { body?: unknown; bodyMarkdown?: string | null }): Promise<RenderedBody | null> {
  const rich = await renderRichText(input);
  if (rich && !rich.ok) throw issuesError('BODY_INVALID', rich.issues);
  return rich ? rich.value : null;
}

function trimmedName(name: string): string {
  const out = name.trim();
  if (!out) throw invalid('VALIDATION_FAILED', 'name', 'must not be empty');
  return out;
}

const bodyColumns = (rendered: RenderedBody | null) => ({ body: rendered ? toJson(rendered.doc) : null, body_html: rendered ? rendered.html : '' });

/** Single types: addressed by slug and locale (`?locale`, the site's default when omitted); the slug is permanent and unique per locale. */
export const singleTypes = resource({
  table: 'single_types',
  noun: 'single type',
  name: 'SingleType',
  plural: 'SingleTypes',
  tag: 'Single types',
  path: '/single-types',
  scope: 'single_types',
  fields: singleTypeFields,
  bodies: { create: SingleTypeCreate, update: SingleTypeUpdate },
  address: {
    param: 'slug',
    params: SingleTypeParams,
    querystring: SingleTypeLocaleQuery,
    key: async (db, siteId, params, query) => ({ locale: await addressedLocale(db, siteId, query.locale), slug: params.slug }),
  },
  list: {
    sort: ['created_at', 'updated_at', 'name', 'slug'],
    search: ['name', 'slug'],
    common: ['search'],
    filters: { locale: CommonFilters.locale },
    apply: (qb, query: { locale?: string }) => (query.locale === undefined ? qb : qb.where('locale', '=', canonicalLocale(query.locale) ?? query.locale)),
  },
  listShape: 'summary',
  unique: [{ field: 'slug', code: 'SLUG_TAKEN' }],
  uniqueWithin: ['locale'],
  rules: {
    /** Everything but the slug is checked before the transaction: the body is rendered there (a worker pool). */
    async prepare(db, { siteId, input }) {
      input.locale = resolveLocale(await getSiteLocales(db, siteId), input.locale);
      input.name = trimmedName(input.name);
      input.rendered = await renderBody(input);
      if (input.data === undefined && !input.rendered) throw invalid('VALIDATION_FAILED', 'data', 'is required unless body or bodyMarkdown is given');
      input.data ??= {};
      input.schema = parseSchemaInput(input.schema);
      checkData(input.schema, input.data);
    },
    create(_tx, { input, row }) {
      Object.assign(row, bodyColumns(input.rendered), {
        data: toJson(input.data),
        schema: input.schema ? toJson(input.schema) : null,
        meta_title: input.meta?.metaTitle ?? null,
        meta_description: input.meta?.metaDescription ?? null,
      });
    },
    /**
     * The slug is permanent (the same slug is accepted). When the schema or the data changes, the
     * resulting data is validated against the resulting schema; a null schema stops validation.
     * `body: null` (or `bodyMarkdown: null`) without the other clears the body; `meta` is merged.
     */
    async update(_tx, { current, input, patch }) {
      if (input.slug !== undefined && input.slug !== current.slug) throw invalid('VALIDATION_FAILED', 'slug', 'The slug of a single type cannot change');
      if (input.name !== undefined) patch.name = trimmedName(input.name);
      const schemaGiven = input.schema !== undefined;
      const schema = schemaGiven ? parseSchemaInput(input.schema) : parseJson<FieldDefinition[] | null>(current.schema, null);
      if (schemaGiven || input.data !== undefined) checkData(schema, input.data ?? parseJson<Record<string, unknown>>(current.data, {}));
      if (input.data !== undefined) patch.data = toJson(input.data);
      if (schemaGiven) patch.schema = schema ? toJson(schema) : null;
      if (input.body !== undefined || input.bodyMarkdown !== undefined) Object.assign(patch, bodyColumns(await renderBody(input)));
      if (input.meta?.metaTitle !== undefined) patch.meta_title = input.meta.metaTitle;
      if (input.meta?.metaDescription !== undefined) patch.meta_description = input.meta.metaDescription;
    },
  },
  docs: {
    list: { summary: 'List single types' },
    create: {
      description:
        '`data` is required unless `body` or `bodyMarkdown` is given. The body is stored as document JSON and rendered to sanitized `bodyHtml` on save.',
    },
    get: { summary: "Get a single type by slug, in the given locale (default: the site's default locale)" },
    update: {
      summary: 'Update a single type (partial; the slug is permanent)',
      description:
        'A `slug` that differs from the current one is a 422. `meta` is merged. When `schema` or `data` changes, the resulting data is validated against the resulting schema; `schema: null` removes it.',
    },
    delete: { summary: 'Delete a single type in the given locale' },
  },
});
