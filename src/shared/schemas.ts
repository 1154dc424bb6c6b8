import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import type { Documented } from './stored-json.js';

/** Common schemas (decisions G3, G5, G8). */
export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    code: Type.String({ description: 'Stable machine-readable code, e.g. VALIDATION_FAILED, SLUG_TAKEN' }),
    message: Type.String(),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: 'Messages per field path (always present on a 422)',
      }),
    ),
  },
  {
    $id: 'Error',
    title: 'Error',
    examples: [
      {
        statusCode: 422,
        error: 'Unprocessable Entity',
        code: 'VALIDATION_FAILED',
        message: 'title must NOT have fewer than 1 characters',
        errors: { title: ['must NOT have fewer than 1 characters'] },
      },
      { statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'The content was not found.' },
    ],
  },
);

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const Uuid = Type.String({ format: 'uuid' });
export const Locale = Type.String({ minLength: 2, maxLength: 35, description: 'BCP 47 language tag' });

/** Ids are 32-bit on both databases (PostgreSQL `integer`): 1 to 2,147,483,647 (decisions H16). */
export const MAX_ID = 2_147_483_647;
/** A canonical decimal id as text, 1 to MAX_ID: no sign, no leading zero, no hex, no spaces. */
export const ID_PATTERN =
  '^(?:[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])$';
/** An id in a body or a query: a 422 naming the field when out of range. */
export const Id = (options: { description?: string } = {}) => Type.Integer({ minimum: 1, maximum: MAX_ID, ...options });
/** An id given as a number or as its canonical decimal text (lists that accept both). */
export const IdOrText = () => Type.Union([Id(), Type.String({ pattern: ID_PATTERN })]);

export const IdParams = Type.Object({ id: Id() });
export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 500 }) });

/** What a delete and other actions without a record answer. Titled: the OpenAPI document names it (plugins/openapi-names.ts). */
export const Message = Type.Object({ message: Type.String() }, { title: 'Message' });

/**
 * `T` or null. A schema with a single `type` becomes `type: [type, 'null']` (JSON Schema 2020-12,
 * OpenAPI 3.1): fast-json-stringify serializes that with a typeof check, where an `anyOf` makes
 * it run a validator per value to pick the branch (about 0.7 µs per nullable field, 90 fields in
 * a page of 15 summaries). Other schemas (literal unions) stay an `anyOf` with null.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'null') return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  return Type.Union([schema, Type.Null()]) as unknown as TUnsafe<Static<T> | null>;
}

/**
 * Named schemas: registered once on the app (`app.addSchema`) and referred to by `ref()`, so the
 * OpenAPI document lists them under `components.schemas` and generated clients get real type
 * names. `named` returns a copy carrying the `$id`; the original stays usable inline.
 * `examples` (JSON Schema's keyword; OpenAPI 3.1) show in /docs and are checked against the
 * schema by test/contract/openapi-names.test.ts.
 */
const NAMED = new Map<string, TSchema>();

export function named<T extends TSchema>(id: string, schema: T, examples?: readonly Documented<Static<T>>[]): T {
  const out = { ...schema, $id: id, title: id, ...(examples ? { examples } : {}) } as T;
  const existing = NAMED.get(id);
  if (existing && JSON.stringify(existing) !== JSON.stringify(out)) throw new Error(`Two different schemas are named ${id}`);
  NAMED.set(id, out);
  return out;
}

/** Every named schema, for the app to register before its routes. */
export function namedSchemas(): TSchema[] {
  return [...NAMED.values()];
}

/** A reference to a named schema, with the static type of the schema. */
export function ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  const id = (schema as { $id?: string }).$id;
  if (!id) throw new Error('ref() needs a schema made by named()');
  return Type.Unsafe<Static<T>>({ $ref: `${id}#` });
}

/** The name of the schema `schema` refers to (`ref(named('Tag', …))` is `Tag`), if it is such a reference. */
function refName(schema: TSchema): string | undefined {
  const target = (schema as { $ref?: unknown }).$ref;
  return typeof target === 'string' && target.endsWith('#') ? target.slice(0, -1) : undefined;
}

/** `{ data: T }`; around a named schema it is titled `<Name>Response`, one component for every route that answers it. */
export function Data<T extends TSchema>(schema: T) {
  const name = refName(schema);
  return Type.Object({ data: schema }, name ? { title: `${name}Response` } : {});
}

export const PageMeta = Type.Object({
  total: Type.Integer(),
  perPage: Type.Integer(),
  currentPage: Type.Integer(),
  lastPage: Type.Integer({ minimum: 1 }),
});

const PageMetaRef = ref(named('PageMeta', PageMeta));

/** `{ data: T[], meta }` (decisions G5); a page of a named schema is titled `<Name>Page`. */
export function Paginated<T extends TSchema>(item: T) {
  const name = refName(item);
  return Type.Object({ data: Type.Array(item), meta: PageMetaRef }, name ? { title: `${name}Page` } : {});
}

/** ISO 8601 date or date-time, as accepted by date filters (decisions G6, G8). */
export const DateFilter = Type.String({ format: 'calendar-date', maxLength: 40, description: 'ISO 8601 date or date-time, a real one' });

/** An absolute http(s) URL (decisions H18). */
export const HttpUrl = (options: { maxLength?: number; description?: string } = {}) => Type.String({ format: 'http-url', maxLength: 2048, ...options });
/** An absolute http(s) URL or a path on the site (`/images/a.png`). */
export const UrlOrPath = (options: { maxLength?: number; description?: string } = {}) => Type.String({ format: 'url-or-path', maxLength: 2048, ...options });

/** A translation-status answer (decisions G10). */
export const TranslationStatus = Type.Object(
  {
    data: Type.Record(Type.String(), Type.Object({ status: Type.Union([Type.Literal('complete'), Type.Literal('missing'), Type.Literal('partial')]) })),
  },
  { title: 'TranslationStatusResponse' },
);

export const CopyToLocaleBody = Type.Object(
  {
    targetLocale: Type.Optional(Locale),
    locale: Type.Optional(Locale),
  },
  { title: 'CopyToLocaleRequest' },
);

/** The site key as a query parameter of a `/v1/public/...` route, for clients that cannot set `X-Site-Key` (decisions G19). */
export const SiteKeyParam = Type.Optional(Type.String({ maxLength: 100, description: 'The site key, when X-Site-Key cannot be sent' }));
export const SiteKeyQuery = Type.Object({ siteKey: SiteKeyParam });
