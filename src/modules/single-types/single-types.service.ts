import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { invalid, issuesError, notFound } from '../../shared/errors.js';
import { validateFieldData, type FieldDefinition, fieldSchemaFromInput } from '../../shared/field-schema/index.js';
import { canonicalLocale } from '../../shared/locales.js';
import { pageMeta } from '../../shared/pagination.js';
import type { RenderedBody } from '../../shared/richtext/index.js';
import { renderRichText } from '../../shared/richtext/render-pool.js';
import { getSiteLocales, resolveLocale } from '../../shared/site-locales.js';
import * as repo from './single-types.repository.js';
import { type SingleTypeCreate, type SingleTypeListQuery, type SingleTypeUpdate, singleTypeFields, singleTypeList } from './single-types.schemas.js';

type SingleTypeRow = repo.SingleTypeRow;

/** Reads return what was stored on write: the document and its HTML are never rendered here. */
const toSingleType = (r: Record<string, unknown>) => singleTypeFields.toApi(r);

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

async function getRow(db: Executor, siteId: string, locale: string, slug: string): Promise<SingleTypeRow> {
  const row = (await repo.singleTypesTable.find(db, siteId, { locale, slug })) as SingleTypeRow | undefined;
  if (!row) throw notFound('single type');
  return row;
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

/** The list selects only what the list shows: never the data, schema or body. */
export async function listSingleTypes(db: Executor, siteId: string, query: Static<typeof SingleTypeListQuery>) {
  const locale = query.locale === undefined ? undefined : (canonicalLocale(query.locale) ?? query.locale);
  const { rows, total } = await repo.singleTypesTable.list(db, siteId, { ...query, locale }, singleTypeList, ['id', ...singleTypeFields.columns('summary')]);
  return { data: rows.map((r) => singleTypeFields.toSummary(r)), meta: pageMeta(total, query.page, query.limit) };
}

export async function getSingleType(db: Executor, siteId: string, slug: string, locale: string | undefined) {
  return toSingleType(await getRow(db, siteId, await addressedLocale(db, siteId, locale), slug));
}

export async function createSingleType(db: Db, siteId: string, input: Static<typeof SingleTypeCreate>) {
  const locale = resolveLocale(await getSiteLocales(db, siteId), input.locale);
  const name = trimmedName(input.name);
  const rendered = await renderBody(input);
  if (input.data === undefined && !rendered) {
    throw invalid('VALIDATION_FAILED', 'data', 'is required unless body or bodyMarkdown is given');
  }
  const data = (input.data ?? {}) as Record<string, unknown>;
  const schema = parseSchemaInput(input.schema);
  checkData(schema, data);
  return db.transaction().execute(async (tx) => {
    if (await repo.singleTypesTable.find(tx, siteId, { locale, slug: input.slug }, ['id'])) {
      throw invalid('SLUG_TAKEN', 'slug', `The slug "${input.slug}" is already used in ${locale}.`);
    }
    const at = now();
    await repo.singleTypesTable.insert(tx, {
      site_id: siteId,
      slug: input.slug,
      name,
      description: input.description ?? null,
      locale,
      data: toJson(data),
      schema: schema ? toJson(schema) : null,
      body: rendered ? toJson(rendered.doc) : null,
      body_html: rendered ? rendered.html : '',
      meta_title: input.meta?.metaTitle ?? null,
      meta_description: input.meta?.metaDescription ?? null,
      created_at: at,
      updated_at: at,
    });
    return toSingleType(await getRow(tx, siteId, locale, input.slug));
  });
}

/**
 * Partial update. The slug is permanent (the same slug is accepted). When the schema or the data
 * changes, the resulting data is validated against the resulting schema; a null schema stops
 * validation. `body: null` (or `bodyMarkdown: null`) without the other clears the body.
 */
export async function updateSingleType(db: Db, siteId: string, slug: string, localeInput: string | undefined, input: Static<typeof SingleTypeUpdate>) {
  const locale = await addressedLocale(db, siteId, localeInput);
  return db.transaction().execute(async (tx) => {
    const row = await getRow(tx, siteId, locale, slug);
    if (input.slug !== undefined && input.slug !== row.slug) {
      throw invalid('VALIDATION_FAILED', 'slug', 'The slug of a single type cannot change');
    }
    const name = input.name === undefined ? undefined : trimmedName(input.name);
    const schemaGiven = input.schema !== undefined;
    const schema = schemaGiven ? parseSchemaInput(input.schema) : parseJson<FieldDefinition[] | null>(row.schema, null);
    const data = (input.data ?? parseJson<Record<string, unknown>>(row.data, {})) as Record<string, unknown>;
    if (schemaGiven || input.data !== undefined) checkData(schema, data);
    const bodyGiven = input.body !== undefined || input.bodyMarkdown !== undefined;
    const rendered = bodyGiven ? await renderBody(input) : null;
    await repo.singleTypesTable.update(
      tx,
      siteId,
      { id: Number(row.id) },
      {
        name,
        description: input.description,
        data: input.data !== undefined ? toJson(data) : undefined,
        schema: schemaGiven ? (schema ? toJson(schema) : null) : undefined,
        body: bodyGiven ? (rendered ? toJson(rendered.doc) : null) : undefined,
        body_html: bodyGiven ? (rendered ? rendered.html : '') : undefined,
        meta_title: input.meta?.metaTitle,
        meta_description: input.meta?.metaDescription,
        updated_at: now(),
      },
    );
    return toSingleType(await getRow(tx, siteId, locale, slug));
  });
}

export async function deleteSingleType(db: Db, siteId: string, slug: string, localeInput: string | undefined) {
  const locale = await addressedLocale(db, siteId, localeInput);
  if (!(await repo.singleTypesTable.delete(db, siteId, { locale, slug }))) throw notFound('single type');
}
