import { randomUUID } from 'node:crypto';
import type { RouteOptions } from 'fastify';
import type { Selectable } from 'kysely';
import { type TObject, type TProperties, Type, type TSchema } from 'typebox';
import { now } from '../db/json.js';
import type { Db, DB, Executor } from '../db/types.js';
import { type ErrorCode, invalid, notFound } from '../shared/errors.js';
import type { CommonFilterValues } from '../shared/list-filters.js';
import { retryLostSlug } from '../shared/slug.js';
import { type ListQuery, pageMeta } from '../shared/pagination.js';
import { Data, IdParams, Message, Paginated, named, ref, Uuid } from '../shared/schemas.js';
import type { ApiOf, FieldMap, Fields } from './fields.js';
import { type ListSpec, listQueryFor, type RecordKey, tableRepository } from './repository.js';

export type TableName = keyof DB & string;
/** A stored row of the table, as Kysely types it. */
export type RowOf<T extends TableName> = Selectable<DB[T]>;
type Row = Record<string, any>;

/** A field unique per site (and per `uniqueWithin` columns, e.g. per locale), checked in order, with its 422 code. */
export interface UniqueField {
  field: string;
  code: ErrorCode;
}

/**
 * The group's own rules. `prepare` runs before the transaction (no lock held: parsing, DNS
 * checks, rendering); the others run inside the writing transaction, after the kit's checks (404,
 * immutable fields, unique fields), and may throw to refuse the write. `context` is what the
 * module passed to `routes()` (its settings, caches), undefined for resources that need none.
 */
export interface ResourceRules<T extends TableName, C = void> {
  /** Before the create's transaction: check or normalise the body (may change `input`). */
  prepare?(db: Db, ctx: { siteId: string; input: Row; context: C }): Promise<void> | void;
  /** Before the insert: check the body, complete or adjust `row`; what it puts in `answer` is added to the create's answer (a secret shown once). */
  create?(tx: Executor, ctx: { siteId: string; input: Row; row: Row; answer: Row; context: C }): Promise<void> | void;
  /** Before the update: check the body against `current`, complete or adjust `patch`. */
  update?(tx: Executor, ctx: { siteId: string; current: RowOf<T>; input: Row; patch: Row; context: C }): Promise<void> | void;
  /** Before the delete (the delete then runs in the same transaction). */
  delete?(tx: Executor, ctx: { siteId: string; current: RowOf<T>; context: C }): Promise<void> | void;
}

export type CrudRoute = 'list' | 'create' | 'get' | 'update' | 'delete';

/** A route's texts beyond the generated ones; `data` replaces the schema of the answer's `data` (e.g. a create that also shows a secret). */
export interface RouteDocs {
  summary?: string;
  description?: string;
  data?: TSchema;
}

export interface ResourceSpec<T extends TableName, F extends Fields, P extends TProperties = {}, C = void, D = ApiOf<F>> {
  table: T;
  /** Singular, lower case, for messages: "webhook" ("Webhook not found", "Webhook deleted."). */
  noun: string;
  /** The schema name in OpenAPI and the operation ids: "Webhook" (getWebhook, listWebhooks). */
  name: string;
  /** Plural for operation ids: "Webhooks". */
  plural: string;
  /** The OpenAPI tag (default: the plural with spaces, "Media Folders"). */
  tag?: string;
  /** The collection path under /v1: "/webhooks". */
  path: string;
  /** The scope prefix: "webhooks" gives webhooks.view, .create, .update, .delete. */
  scope: string;
  /** A route's scope when it is not `<scope>.<view|create|update|delete>` (media folders are created under media.update). */
  scopes?: Partial<Record<CrudRoute, string>>;
  /** The id column: an auto-increment integer (default) or a uuid the kit generates. */
  id?: 'integer' | 'uuid';
  fields: FieldMap<F>;
  list: ListSpec<P, any>;
  /** The list answers the summary shape (`<name>Summary`: fields without `summary: false`), reading only its columns. */
  listShape?: 'summary';
  /**
   * How get, update and delete address a record when not by `/:id`: the path parameter, the
   * params and query schemas, and the key they give (single types: `/:slug`, `?locale`).
   */
  address?: { param: string; params: TObject; querystring?: TObject; key(db: Executor, siteId: string, params: Row, query: Row): Promise<RecordKey> };
  /** Hand-written request bodies, when the field map cannot express them (write-only fields, alternatives). */
  bodies?: { create?: TSchema; update?: TSchema };
  unique?: readonly UniqueField[];
  /** Unique fields are unique among the rows sharing these columns, e.g. `['locale']`. */
  uniqueWithin?: readonly string[];
  /** Computed fields for a page of rows, one query per page (e.g. contentCount). */
  computed?(db: Executor, siteId: string, rows: Row[]): Promise<Row[]>;
  /** What get, create and update answer when it is more than the field map's shape (a folder with its children): its schema and how it is read. */
  detail?: { schema: TSchema; load(db: Executor, siteId: string, row: RowOf<T>): Promise<D> };
  rules?: ResourceRules<T, C>;
  /** Module state kept in step: `beforeRead` before a list or get (flush buffered counters), `afterWrite` after a committed write (drop a cache). */
  hooks?: { beforeRead?(context: C, siteId: string): Promise<void> | void; afterWrite?(context: C, siteId: string): void };
  /**
   * What delivery tokens see of the resource (decisions G13), e.g. `{ column: 'status', value: 'active' }`
   * for forms: their lists hold only those rows and any other row is a 404 to them.
   */
  delivery?: { column: string; value: string };
  docs?: Partial<Record<CrudRoute, RouteDocs>>;
  /**
   * Examples for the OpenAPI document and /docs: a record as answered (its summary, when the list
   * answers one, is taken from it) and a create body. test/contract/openapi-names.test.ts checks
   * each against its schema.
   */
  examples?: { record: Row; create?: Row };
}

/**
 * How a layer (translatable.ts) extends the plain resource: extra create-body properties, the
 * create's starting row resolved before the transaction (the locale), a step after the unique
 * checks (slug, translation group), extra create responses.
 */
export interface ResourceLayer {
  createBody?: TProperties;
  start?(db: Db, siteId: string, input: Row): Promise<Row>;
  complete?(tx: Executor, siteId: string, input: Row, row: Row): Promise<void>;
  createResponses?: Record<number, unknown>;
}

/**
 * The resource kit (decisions G5, G6): from a table, its field map, its list, its unique fields and
 * its rules, the service (list page, get, create, update, delete, each filtered by site) and the
 * five CRUD routes as data, which a module registers one by one and may replace or leave out:
 *
 *   const r = webhooks.routes(db, settings);
 *   for (const route of [r.list, r.create, r.get, r.update, r.delete]) app.route(route);
 */
export function resource<T extends TableName, F extends Fields, P extends TProperties = {}, C = void, D = ApiOf<F>>(
  spec: ResourceSpec<T, F, P, C, D>,
  layer: ResourceLayer = {},
) {
  const repo = tableRepository(spec.table);
  const fields = spec.fields;
  const record = spec.examples?.record;
  const Schema = named(spec.name, fields.response(), record && [record as never]);
  const SummarySchema = fields.summaryResponse();
  const summaryOf = (r: Row) => Object.fromEntries(Object.keys((SummarySchema as unknown as TObject).properties).map((k) => [k, r[k]]));
  const Summary = spec.listShape ? named(`${spec.name}Summary`, SummarySchema, record && [summaryOf(record) as never]) : Schema;
  const listColumns = spec.listShape ? ['id', ...fields.columns('summary')] : undefined;
  const createBody = fields.createBody(layer.createBody ?? {});
  const CreateBody = spec.examples?.create ? { ...createBody, examples: [spec.examples.create] } : createBody;
  const UpdateBody = fields.updateBody();
  const ListQuerySchema = listQueryFor(spec.list);
  const Params = spec.id === 'uuid' ? Type.Object({ id: Uuid }) : IdParams;
  const unique = spec.unique ?? [];
  const within = spec.uniqueWithin ?? [];
  type Api = ApiOf<F>;
  /** A record's id, or its key when the resource has an `address` ({ locale, slug }). */
  type Id = number | string | RecordKey;
  const keyOf = (id: Id): RecordKey => (typeof id === 'object' ? id : { id });

  /** `delivered`: only what delivery tokens see (decisions G13); writes, which only management tokens make, pass false. */
  async function getRow(db: Executor, siteId: string, id: Id, delivered = false): Promise<RowOf<T>> {
    const row = await repo.find(db, siteId, keyOf(id));
    if (!row || (delivered && spec.delivery && row[spec.delivery.column] !== spec.delivery.value)) throw notFound(spec.noun);
    return row as RowOf<T>;
  }
  const listSpec: ListSpec<P, any> = spec.delivery
    ? {
        ...spec.list,
        apply: async (qb, query, ctx) => {
          const q = spec.list.apply ? await spec.list.apply(qb, query, ctx) : qb;
          return query.delivered ? q.where(spec.delivery!.column, '=', spec.delivery!.value) : q;
        },
      }
    : spec.list;

  async function present(db: Executor, siteId: string, rows: Row[]): Promise<Api[]> {
    const computed = spec.computed ? await spec.computed(db, siteId, rows) : [];
    return rows.map((r, i) => fields.toApi(r, computed[i]));
  }
  /** The answer of get, create and update: the detail when the resource has one, else the API object. */
  async function answerOf(db: Executor, siteId: string, row: RowOf<T>): Promise<D> {
    if (spec.detail) return spec.detail.load(db, siteId, row);
    return (await present(db, siteId, [row]))[0] as D;
  }
  const one = async (db: Executor, siteId: string, id: Id) => answerOf(db, siteId, await getRow(db, siteId, id));

  /** The 422 of a unique field taken; `scope` names where ("in de") when unique per locale. */
  function uniqueError(u: UniqueField, value: unknown, scope: Row) {
    const where = Object.values(scope).length ? ` in ${Object.values(scope).join(', ')}` : '';
    const message = u.field === 'name' ? `A ${spec.noun} named "${value}" already exists${where}.` : `The ${u.field} "${value}" is already used${where}.`;
    return invalid(u.code, u.field, message);
  }

  /** 422 when another record (of the same `uniqueWithin` values) holds one of the unique values being written: one query. */
  async function assertUnique(db: Executor, siteId: string, scope: Row, values: Row, exceptId?: number | string) {
    const wanted: Row = {};
    for (const u of unique) {
      const column = fields.column(u.field as keyof F & string);
      if (values[column] !== undefined) wanted[column] = values[column];
    }
    const clashes = await repo.clashes(db, siteId, scope, wanted, exceptId);
    for (const u of unique) {
      const column = fields.column(u.field as keyof F & string);
      const value = wanted[column];
      if (value !== undefined && clashes.some((c) => c[column] === value)) throw uniqueError(u, value, scope);
    }
  }
  const scopeOf = (row: Row): Row => Object.fromEntries(within.map((c) => [c, row[c]]));

  /** Inserts a complete row (timestamps added) and answers its id. */
  async function insert(tx: Executor, row: Row): Promise<Id> {
    row.created_at = row.updated_at = now();
    if (spec.id !== 'uuid') return repo.insert(tx, row);
    row.id ??= randomUUID();
    await repo.insertKeyed(tx, row as Row & { id: string });
    return row.id as string;
  }

  /**
   * The group's service: what the kit's routes call, and what the group's own endpoints call to
   * keep the same checks. `context` is the module's (see `routes`), omitted when it needs none.
   */
  const service = {
    getRow,
    present,
    uniqueError,
    insert,

    async list(db: Executor, siteId: string, query: ListQuery & CommonFilterValues, delivered = false, context?: C) {
      await spec.hooks?.beforeRead?.(context as C, siteId);
      const { rows, total } = await repo.list(db, siteId, { ...query, delivered }, listSpec, listColumns);
      const data = spec.listShape ? rows.map((r) => fields.toSummary(r)) : await present(db, siteId, rows);
      return { data, meta: pageMeta(total, query.page, query.limit) };
    },

    async get(db: Executor, siteId: string, id: Id, delivered = false, context?: C): Promise<D> {
      await spec.hooks?.beforeRead?.(context as C, siteId);
      return answerOf(db, siteId, await getRow(db, siteId, id, delivered));
    },

    async create(db: Db, siteId: string, input: Row, context?: C): Promise<D & Row> {
      await spec.rules?.prepare?.(db, { siteId, input, context: context as C });
      const start = layer.start ? await layer.start(db, siteId, input) : {};
      // A slug the layer generates (none sent) may lose a race with another create: tried again (decisions HR2).
      const out = await retryLostSlug(input.slug === undefined, () =>
        db.transaction().execute(async (tx) => {
          const row: Row = { ...fields.insertRow(input), site_id: siteId, ...start };
          await assertUnique(tx, siteId, scopeOf(row), row);
          await layer.complete?.(tx, siteId, input, row);
          const answer: Row = {};
          await spec.rules?.create?.(tx, { siteId, input, row, answer, context: context as C });
          return { ...(await one(tx, siteId, await insert(tx, row))), ...answer };
        }),
      );
      spec.hooks?.afterWrite?.(context as C, siteId);
      return out;
    },

    async update(db: Db, siteId: string, id: Id, input: Row, context?: C): Promise<D> {
      const out = await db.transaction().execute(async (tx) => {
        const current = await getRow(tx, siteId, id);
        const key = { id: (current as Row).id };
        for (const [field, code, stored] of fields.immutableChanges(input, current)) {
          throw invalid(code, field, `The ${field} of a ${spec.noun} cannot be changed (it is "${String(stored)}").`);
        }
        const patch = fields.patch(input);
        const changed: Row = {};
        for (const [column, value] of Object.entries(patch)) if (value !== (current as Row)[column]) changed[column] = value;
        await assertUnique(tx, siteId, scopeOf(current), changed, key.id);
        await spec.rules?.update?.(tx, { siteId, current, input, patch, context: context as C });
        await repo.update(tx, siteId, key, { ...patch, updated_at: now() });
        return one(tx, siteId, key.id);
      });
      spec.hooks?.afterWrite?.(context as C, siteId);
      return out;
    },

    async delete(db: Db, siteId: string, id: Id, context?: C): Promise<void> {
      const rule = spec.rules?.delete;
      if (!rule) {
        if (!(await repo.delete(db, siteId, keyOf(id)))) throw notFound(spec.noun);
      } else {
        await db.transaction().execute(async (tx) => {
          const current = await getRow(tx, siteId, id);
          await rule(tx, { siteId, current, context: context as C });
          await repo.delete(tx, siteId, { id: (current as Row).id });
        });
      }
      spec.hooks?.afterWrite?.(context as C, siteId);
    },
  };

  const docs = spec.docs ?? {};
  const data = (name: CrudRoute) => Data(docs[name]?.data ?? spec.detail?.schema ?? ref(Schema));
  const scope = (name: CrudRoute, action: string) => (spec.scopes?.[name] ?? `${spec.scope}.${action}`) as never;
  const tags = [spec.tag ?? spec.plural.replace(/([a-z])([A-Z])/g, '$1 $2')];
  const noun = spec.noun;

  /** The five routes, as data; a module registers each one (and may replace one with its own). */
  function routes(db: Db, context?: C): Record<CrudRoute, RouteOptions> {
    const delivered = (req: any) => req.auth.kind === 'delivery';
    // A read that first writes buffered counters (beforeRead) may meet a full disk (decisions HF7).
    const readWrites = spec.hooks?.beforeRead ? { writes: true } : {};
    const address = spec.address;
    const url = `${spec.path}/:${address?.param ?? 'id'}`;
    const addressed = { params: address?.params ?? Params, ...(address?.querystring ? { querystring: address.querystring } : {}) };
    const key = async (req: any): Promise<Id> => (address ? address.key(db, req.auth.siteId, req.params, req.query) : req.params.id);
    return {
      list: route({
        method: 'GET',
        url: spec.path,
        config: { scope: scope('list', 'view'), ...readWrites },
        schema: {
          tags,
          operationId: `list${spec.plural}`,
          summary: docs.list?.summary ?? `List ${spec.plural.toLowerCase()}`,
          description: docs.list?.description,
          querystring: ListQuerySchema,
          response: { 200: Paginated(ref(Summary)) },
        },
        handler: (req) => service.list(db, req.auth.siteId, req.query, delivered(req), context),
      }),
      create: route({
        method: 'POST',
        url: spec.path,
        config: { scope: scope('create', 'create') },
        schema: {
          tags,
          operationId: `create${spec.name}`,
          summary: docs.create?.summary ?? `Create a ${noun}`,
          description: docs.create?.description,
          body: spec.bodies?.create ?? CreateBody,
          response: { 201: data('create'), ...layer.createResponses },
        },
        handler: async (req, reply) => reply.code(201).send({ data: await service.create(db, req.auth.siteId, req.body, context) }),
      }),
      get: route({
        method: 'GET',
        url,
        config: { scope: scope('get', 'view'), ...readWrites },
        schema: {
          tags,
          operationId: `get${spec.name}`,
          summary: docs.get?.summary ?? `Get a ${noun}`,
          description: docs.get?.description,
          ...addressed,
          response: { 200: data('get') },
        },
        handler: async (req) => ({ data: await service.get(db, req.auth.siteId, await key(req), delivered(req), context) }),
      }),
      update: route({
        method: 'PUT',
        url,
        config: { scope: scope('update', 'update') },
        schema: {
          tags,
          operationId: `update${spec.name}`,
          summary: docs.update?.summary ?? `Update a ${noun} (partial)`,
          description: docs.update?.description,
          ...addressed,
          body: spec.bodies?.update ?? UpdateBody,
          response: { 200: data('update') },
        },
        handler: async (req) => ({ data: await service.update(db, req.auth.siteId, await key(req), req.body, context) }),
      }),
      delete: route({
        method: 'DELETE',
        url,
        config: { scope: scope('delete', 'delete') },
        schema: {
          tags,
          operationId: `delete${spec.name}`,
          summary: docs.delete?.summary ?? `Delete a ${noun}`,
          description: docs.delete?.description,
          ...addressed,
          response: { 200: Message },
        },
        handler: async (req) => {
          await service.delete(db, req.auth.siteId, await key(req), context);
          return { message: `${noun[0]!.toUpperCase()}${noun.slice(1)} deleted.` };
        },
      }),
    };
  }

  return { repo, service, routes, tags, schemas: { Schema, CreateBody, UpdateBody, ListQuery: ListQuerySchema, Params } };
}

/** A route object with an untyped request, as the kit builds them (the schemas validate the request). */
export const route = (r: Omit<RouteOptions, 'handler'> & { handler: (req: any, reply: any) => unknown }) => r as RouteOptions;
