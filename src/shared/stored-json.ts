import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

/**
 * JSON text kept in the database, written into an answer as it is stored (decisions PF13): a
 * content's categories and tags are kept on its row as JSON text (migration 0048), and parsing
 * that text on every read only for the serializer to write the same text out again cost a list
 * page a tenth of its CPU.
 *
 * A schema made with `StoredJson(schema)` is documented (OpenAPI, validation of examples) as
 * `schema`; the value a handler gives for it is `storedJson(text)`. The serializer
 * (plugins/serialization.ts) compiles such a node as an unescaped string and takes the quotes off
 * afterwards: the value is the text wrapped in two control characters, which never appear
 * unescaped in any other part of a serialized answer (JSON escapes U+0000-U+001F in strings), so
 * finding them is exact.
 */
declare const STORED: unique symbol;
/** JSON text of a `T`, as stored, ready to be written into an answer. */
export type StoredJson<T> = string & { readonly [STORED]: T };

/** The keyword that marks a stored-JSON node in a schema: read by the serializer, dropped from the OpenAPI document. */
export const STORED_JSON_KEYWORD = 'x-cairn-stored-json';
const OPEN = '\u0001';
const CLOSE = '\u0002';

/** `text` (JSON of a `T`, as the database keeps it) as a value for a `StoredJson` schema. */
export function storedJson<T>(text: string): StoredJson<T> {
  return (OPEN + text + CLOSE) as StoredJson<T>;
}

/** A schema whose value is given as stored JSON text (see storedJson); documented as `schema`. */
export function StoredJson<T extends TSchema>(schema: T): TUnsafe<StoredJson<Static<T>>> {
  return Type.Unsafe<StoredJson<Static<T>>>({ ...schema, [STORED_JSON_KEYWORD]: true });
}

/** A value as the documentation shows it: stored JSON as the value it holds (schema examples). */
export type Documented<T> =
  T extends StoredJson<infer V> ? V : T extends readonly (infer E)[] ? Documented<E>[] : T extends object ? { [K in keyof T]: Documented<T[K]> } : T;

/**
 * `schema` as the serializer compiles it: every stored-JSON node an unescaped string (its value
 * is written between quotes as it is, and unwrapStoredJson takes the quotes off).
 */
export function serializableSchema<T>(schema: T): T {
  return rewrite(schema, (node) => (node[STORED_JSON_KEYWORD] === true ? { type: 'string', format: 'unsafe' } : node));
}

/** A copy of `document` without the stored-JSON keyword (the OpenAPI document: the node is what it documents). */
export function withoutStoredJsonKeyword<T>(document: T): T {
  return rewrite(document, (node) => {
    if (!(STORED_JSON_KEYWORD in node)) return node;
    const { [STORED_JSON_KEYWORD]: _marked, ...rest } = node;
    return rest;
  });
}

/** `value` with every object in it passed through `change` (then its members): copies only what changes. */
function rewrite<T>(value: T, change: (node: Record<string, unknown>) => Record<string, unknown>): T {
  if (Array.isArray(value)) {
    const items = value.map((item) => rewrite(item, change));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  if (value === null || typeof value !== 'object') return value;
  const node = change(value as Record<string, unknown>);
  let copy: Record<string, unknown> | undefined;
  for (const [key, member] of Object.entries(node)) {
    const changed = rewrite(member, change);
    if (changed !== member) (copy ??= { ...node })[key] = changed;
  }
  return (copy ?? node) as T;
}

/**
 * A serialized answer with its stored JSON in place: each `"<OPEN>text<CLOSE>"` becomes `text`.
 * Looks for single characters (a two-character search would stop at every quote), and joins
 * slices, which V8 keeps as a rope that the socket write flattens once.
 */
export function unwrapStoredJson(json: string): string {
  let at = json.indexOf(OPEN);
  if (at < 0) return json;
  let out = '';
  let from = 0;
  while (at >= 0) {
    const end = json.indexOf(CLOSE, at);
    out += json.slice(from, at - 1) + json.slice(at + 1, end);
    from = end + 2;
    at = json.indexOf(OPEN, from);
  }
  return out + json.slice(from);
}

/**
 * The `$id`s of the shared schemas that hold stored JSON, themselves or through a `$ref` to
 * another that does: a route's serializer unwraps its answers when its schema refers to one.
 */
export function storedJsonSchemaIds(schemas: Record<string, unknown>): Set<string> {
  const texts = Object.values(schemas).map((s) => [String((s as { $id?: unknown }).$id ?? ''), JSON.stringify(s)] as const);
  const ids = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [id, text] of texts) {
      if (!id || ids.has(id)) continue;
      if (text.includes(`"${STORED_JSON_KEYWORD}":true`) || refersTo(text, ids)) {
        ids.add(id);
        grew = true;
      }
    }
  }
  return ids;
}

/** Whether schema JSON text holds stored JSON itself or refers to one of `ids` (storedJsonSchemaIds). */
export function needsUnwrap(text: string, ids: ReadonlySet<string>): boolean {
  return text.includes(`"${STORED_JSON_KEYWORD}":true`) || refersTo(text, ids);
}

function refersTo(text: string, ids: ReadonlySet<string>): boolean {
  for (const id of ids) if (text.includes(`"$ref":"${id}#"`) || text.includes(`"$ref":"${id}"`)) return true;
  return false;
}
