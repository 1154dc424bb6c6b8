import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

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
  { $id: 'Error', title: 'Error' },
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

export const Message = Type.Object({ message: Type.String() });

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
 */
const NAMED = new Map<string, TSchema>();

export function named<T extends TSchema>(id: string, schema: T): T {
  const existing = NAMED.get(id);
  if (existing && JSON.stringify(existing) !== JSON.stringify({ ...schema, $id: id, title: id })) throw new Error(`Two different schemas are named ${id}`);
  const out = { ...schema, $id: id, title: id } as T;
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

/** `{ data: T }` */
export function Data<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema });
}

export const PageMeta = Type.Object({
  total: Type.Integer(),
  perPage: Type.Integer(),
  currentPage: Type.Integer(),
  lastPage: Type.Integer({ minimum: 1 }),
});

const PageMetaRef = ref(named('PageMeta', PageMeta));

/** `{ data: T[], meta }` (decisions G5). */
export function Paginated<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: PageMetaRef });
}

/** ISO 8601 date or date-time, as accepted by date filters (decisions G6, G8). */
export const DateFilter = Type.String({ format: 'calendar-date', maxLength: 40, description: 'ISO 8601 date or date-time, a real one' });

/** An absolute http(s) URL (decisions H18). */
export const HttpUrl = (options: { maxLength?: number; description?: string } = {}) => Type.String({ format: 'http-url', maxLength: 2048, ...options });
/** An absolute http(s) URL or a path on the site (`/images/a.png`). */
export const UrlOrPath = (options: { maxLength?: number; description?: string } = {}) => Type.String({ format: 'url-or-path', maxLength: 2048, ...options });

/** A translation-status answer (decisions G10). */
export const TranslationStatus = Type.Object({
  data: Type.Record(Type.String(), Type.Object({ status: Type.Union([Type.Literal('complete'), Type.Literal('missing'), Type.Literal('partial')]) })),
});

export const CopyToLocaleBody = Type.Object({
  targetLocale: Type.Optional(Locale),
  locale: Type.Optional(Locale),
});

/** The site key as a query parameter of a `/v1/public/...` route, for clients that cannot set `X-Site-Key` (decisions G19). */
export const SiteKeyParam = Type.Optional(Type.String({ maxLength: 100, description: 'The site key, when X-Site-Key cannot be sent' }));
export const SiteKeyQuery = Type.Object({ siteKey: SiteKeyParam });
