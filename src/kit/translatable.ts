import type { RouteOptions } from 'fastify';
import { type TProperties, Type, type TSchema } from 'typebox';
import { now } from '../db/json.js';
import type { Db, DB, Executor } from '../db/types.js';
import { type ErrorCode, invalid, notFound } from '../shared/errors.js';
import type { CommonFilterValues } from '../shared/list-filters.js';
import { type ListQuery, pageMeta } from '../shared/pagination.js';
import { CopyToLocaleBody, Data, IdParams, Locale, Message, Paginated, named, ref, TranslationStatus, Uuid } from '../shared/schemas.js';
import { getSiteLocales, resolveLocale } from '../shared/site-locales.js';
import { findFreeSlug, type LocaleSlugTable, slugify, slugsInLocale } from '../shared/slug.js';
import { assertLocaleFree, copyTargetLocale, groupMembers, newTranslationGroup, translationStatus } from '../shared/translations/index.js';
import type { ApiOf, FieldMap, Fields } from './fields.js';
import { type ListSpec, listQueryFor, tableRepository } from './repository.js';

type Row = Record<string, any>;

/**
 * A field unique per site and locale, in the order checked. On copy-to-locale a taken slug gets a
 * free `-2` suffix, a taken name gets ` (<locale>)`, anything else is refused with `code`.
 */
export interface UniqueRule {
  field: string;
  code: ErrorCode;
  onCopy: 'free-slug' | 'locale-suffix' | 'refuse';
}

/** The resource-specific rules, each run inside the writing transaction. */
export interface TranslatableRules {
  /** Before the insert: check the body, complete or adjust `row`. */
  create?(tx: Executor, ctx: { siteId: string; locale: string; input: Row; row: Row }): Promise<void> | void;
  /** Before the update: check the body against `current`, complete or adjust `patch`. */
  update?(tx: Executor, ctx: { siteId: string; current: Row; input: Row; patch: Row }): Promise<void> | void;
  /** Before the copy's insert: adjust `row` for the target locale. */
  copy?(tx: Executor, ctx: { siteId: string; current: Row; target: string; row: Row }): Promise<void> | void;
  /** Before the delete. */
  delete?(tx: Executor, ctx: { siteId: string; current: Row }): Promise<void> | void;
}

export interface TranslatableSpec<F extends Fields, P extends TProperties = {}> {
  table: keyof DB & string;
  /** Singular, lower case, for messages: "tag". */
  noun: string;
  /** The schema name in OpenAPI and the operation ids: "Tag" (getTag, listTags). */
  name: string;
  /** Plural for operation ids: "Tags". */
  plural: string;
  /** The collection path under /v1: "/tags". */
  path: string;
  /** The scope prefix: "tags" gives tags.view, tags.create, tags.update, tags.delete. */
  scope: string;
  fields: FieldMap<F>;
  list: ListSpec<P, any>;
  unique?: readonly UniqueRule[];
  /** Generate the slug from this field when the create body has none (e.g. name; fallback "tag"). */
  slugFrom?: { field: string; fallback: string };
  /** Computed fields for a page of rows, one query per page (e.g. contentCount). */
  computed?(db: Executor, siteId: string, rows: Row[]): Promise<Row[]>;
  rules?: TranslatableRules;
  /**
   * What delivery tokens see of the resource (decisions G13), e.g. `{ column: 'status', value: 'active' }`
   * for forms: their lists hold only those rows and any other row is a 404 to them.
   */
  delivery?: { column: string; value: string };
  /** Route texts beyond the generated ones. */
  docs?: Partial<Record<'list' | 'create' | 'update' | 'delete' | 'copyToLocale', { summary?: string; description?: string }>>;
}

export type RouteName = 'list' | 'create' | 'get' | 'update' | 'delete' | 'translations' | 'copyToLocale';

/**
 * The resource kit for translatable groups (decisions G5, G6, G9, G10, G17): given a table, its
 * field map, its list and its rules, it provides the list page, get/create/update/delete,
 * translation status and copy-to-locale, and the seven route objects a module registers.
 */
export function translatableResource<F extends Fields, P extends TProperties = {}>(spec: TranslatableSpec<F, P>) {
  const repo = tableRepository(spec.table);
  const fields = spec.fields;
  const Schema = named(spec.name, fields.response());
  const CreateBody = fields.createBody({
    locale: Type.Optional({ ...Locale, description: "The record's locale (default: the site's default locale)" } as TSchema),
    translationGroup: Type.Optional({ ...Uuid, description: 'Join an existing translation group' } as TSchema),
  });
  const UpdateBody = fields.updateBody();
  const ListQuerySchema = listQueryFor(spec.list);
  const unique = spec.unique ?? [];
  type Api = ApiOf<F>;

  /** `delivered`: only what delivery tokens see (decisions G13); writes, which only management tokens make, pass false. */
  async function getRow(db: Executor, siteId: string, id: number, delivered: boolean): Promise<Row> {
    const row = await repo.find(db, siteId, { id });
    if (!row || (delivered && spec.delivery && row[spec.delivery.column] !== spec.delivery.value)) throw notFound(spec.noun);
    return row;
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

  /** 422 when another record of the locale holds one of the unique values being written. */
  async function assertUnique(db: Executor, siteId: string, locale: string, values: Row, exceptId?: number) {
    const wanted: Row = {};
    for (const u of unique) {
      const column = fields.column(u.field as keyof F & string);
      if (values[column] !== undefined) wanted[column] = values[column];
    }
    const clashes = await repo.clashes(db, siteId, locale, wanted, exceptId);
    for (const u of unique) {
      const column = fields.column(u.field as keyof F & string);
      const value = wanted[column];
      if (value !== undefined && clashes.some((c) => c[column] === value)) throw uniqueError(u, value, locale);
    }
  }

  function uniqueError(u: UniqueRule, value: unknown, locale: string) {
    const message =
      u.field === 'name' ? `A ${spec.noun} named "${value}" already exists in ${locale}.` : `The ${u.field} "${value}" is already used in ${locale}.`;
    return invalid(u.code, u.field, message);
  }

  const freeSlug = (tx: Executor, siteId: string, locale: string, base: string) =>
    findFreeSlug(base, (c) => slugsInLocale(tx, spec.table as LocaleSlugTable, siteId, locale, c));

  const service = {
    getRow,
    present,

    async list(db: Executor, siteId: string, query: ListQuery & CommonFilterValues, delivered: boolean) {
      const { rows, total } = await repo.list(db, siteId, { ...query, delivered }, listSpec);
      return { data: await present(db, siteId, rows), meta: pageMeta(total, query.page, query.limit) };
    },

    async get(db: Executor, siteId: string, id: number, delivered: boolean): Promise<Api> {
      const [out] = await present(db, siteId, [await getRow(db, siteId, id, delivered)]);
      return out!;
    },

    async create(db: Db, siteId: string, input: Row): Promise<Api> {
      const locale = resolveLocale(await getSiteLocales(db, siteId), input.locale);
      return db.transaction().execute(async (tx) => {
        const row: Row = { ...fields.insertRow(input), site_id: siteId, locale };
        await assertUnique(tx, siteId, locale, row);
        if (spec.slugFrom && !row.slug) {
          row.slug = await freeSlug(tx, siteId, locale, slugify(String(row[fields.column(spec.slugFrom.field as keyof F & string)])) || spec.slugFrom.fallback);
        }
        if (input.translationGroup) await assertLocaleFree(tx, spec.table, siteId, input.translationGroup, locale);
        row.translation_group = input.translationGroup ?? newTranslationGroup();
        await spec.rules?.create?.(tx, { siteId, locale, input, row });
        row.created_at = row.updated_at = now();
        return service.get(tx, siteId, await repo.insert(tx, row), false);
      });
    },

    async update(db: Db, siteId: string, id: number, input: Row): Promise<Api> {
      return db.transaction().execute(async (tx) => {
        const current = await getRow(tx, siteId, id, false);
        for (const [field, code, stored] of fields.immutableChanges(input, current)) {
          throw invalid(code, field, `The ${field} of a ${spec.noun} cannot be changed (it is "${String(stored)}").`);
        }
        const patch = fields.patch(input);
        const changed: Row = {};
        for (const [column, value] of Object.entries(patch)) if (value !== current[column]) changed[column] = value;
        await assertUnique(tx, siteId, current.locale, changed, id);
        await spec.rules?.update?.(tx, { siteId, current, input, patch });
        await repo.update(tx, siteId, { id }, { ...patch, updated_at: now() });
        return service.get(tx, siteId, id, false);
      });
    },

    async delete(db: Db, siteId: string, id: number): Promise<void> {
      const rule = spec.rules?.delete;
      if (!rule) {
        if (!(await repo.delete(db, siteId, { id }))) throw notFound(spec.noun);
        return;
      }
      await db.transaction().execute(async (tx) => {
        await rule(tx, { siteId, current: await getRow(tx, siteId, id, false) });
        await repo.delete(tx, siteId, { id });
      });
    },

    /** Status per enabled locale (decisions G10): the translated fields filled in the source must be filled in each member. */
    async translations(db: Executor, siteId: string, id: number, delivered: boolean) {
      const current = await getRow(db, siteId, id, delivered);
      const { enabledLocales } = await getSiteLocales(db, siteId);
      const members = await groupMembers<Row>(db, spec.table, siteId, current.translation_group);
      const member = (r: Row) => ({ locale: r.locale as string, fields: fields.translatedValues(r) });
      return translationStatus(member(current), members.map(member), enabledLocales);
    },

    /** A copy in the target locale, in the same group; 409 when that locale has a member (decisions G10). */
    async copyToLocale(db: Db, siteId: string, id: number, body: { targetLocale?: string; locale?: string }): Promise<Api> {
      const target = copyTargetLocale(await getSiteLocales(db, siteId), body);
      return db.transaction().execute(async (tx) => {
        const current = await getRow(tx, siteId, id, false);
        await assertLocaleFree(tx, spec.table, siteId, current.translation_group, target);
        const row: Row = { ...fields.insertRow(fields.toApi(current)), site_id: siteId, locale: target, translation_group: current.translation_group };
        for (const u of unique) {
          const column = fields.column(u.field as keyof F & string);
          if (u.onCopy === 'free-slug') row[column] = await freeSlug(tx, siteId, target, row[column]);
          else if ((await repo.clashes(tx, siteId, target, { [column]: row[column] })).length) {
            if (u.onCopy === 'refuse') throw uniqueError(u, row[column], target);
            row[column] = `${row[column]} (${target})`;
          }
        }
        await spec.rules?.copy?.(tx, { siteId, current, target, row });
        row.created_at = row.updated_at = now();
        return service.get(tx, siteId, await repo.insert(tx, row), false);
      });
    },
  };

  /** The seven routes, as data; a module registers each one (and may replace one with its own). */
  function routes(db: Db): Record<RouteName, RouteOptions> {
    const tags = [spec.plural.replace(/([a-z])([A-Z])/g, '$1 $2')];
    const one = Data(ref(Schema));
    const docs = spec.docs ?? {};
    const noun = spec.noun;
    const route = (r: Omit<RouteOptions, 'handler'> & { handler: (req: any, reply: any) => unknown }) => r as RouteOptions;
    return {
      list: route({
        method: 'GET',
        url: spec.path,
        config: { scope: `${spec.scope}.view` as never },
        schema: {
          tags,
          operationId: `list${spec.plural}`,
          summary: docs.list?.summary ?? `List ${spec.plural.toLowerCase()}`,
          description: docs.list?.description,
          querystring: ListQuerySchema,
          response: { 200: Paginated(ref(Schema)) },
        },
        handler: (req) => service.list(db, req.auth.siteId, req.query, req.auth.kind === 'delivery'),
      }),
      create: route({
        method: 'POST',
        url: spec.path,
        config: { scope: `${spec.scope}.create` as never },
        schema: {
          tags,
          operationId: `create${spec.name}`,
          summary: docs.create?.summary ?? `Create a ${noun}`,
          description: docs.create?.description,
          body: CreateBody,
          response: { 201: one, 409: { $ref: 'Error#', description: 'The translation group already has a member in that locale' } },
        },
        handler: async (req, reply) => reply.code(201).send({ data: await service.create(db, req.auth.siteId, req.body) }),
      }),
      get: route({
        method: 'GET',
        url: `${spec.path}/:id`,
        config: { scope: `${spec.scope}.view` as never },
        schema: { tags, operationId: `get${spec.name}`, summary: `Get a ${noun}`, params: IdParams, response: { 200: one } },
        handler: async (req) => ({ data: await service.get(db, req.auth.siteId, req.params.id, req.auth.kind === 'delivery') }),
      }),
      update: route({
        method: 'PUT',
        url: `${spec.path}/:id`,
        config: { scope: `${spec.scope}.update` as never },
        schema: {
          tags,
          operationId: `update${spec.name}`,
          summary: docs.update?.summary ?? `Update a ${noun} (partial)`,
          description: docs.update?.description,
          params: IdParams,
          body: UpdateBody,
          response: { 200: one },
        },
        handler: async (req) => ({ data: await service.update(db, req.auth.siteId, req.params.id, req.body) }),
      }),
      delete: route({
        method: 'DELETE',
        url: `${spec.path}/:id`,
        config: { scope: `${spec.scope}.delete` as never },
        schema: {
          tags,
          operationId: `delete${spec.name}`,
          summary: docs.delete?.summary ?? `Delete a ${noun}`,
          description: docs.delete?.description,
          params: IdParams,
          response: { 200: Message },
        },
        handler: async (req) => {
          await service.delete(db, req.auth.siteId, req.params.id);
          return { message: `${noun[0]!.toUpperCase()}${noun.slice(1)} deleted.` };
        },
      }),
      translations: route({
        method: 'GET',
        url: `${spec.path}/:id/translations`,
        config: { scope: `${spec.scope}.view` as never },
        schema: {
          tags,
          operationId: `get${spec.name}Translations`,
          summary: 'Translation status per enabled locale',
          params: IdParams,
          response: { 200: TranslationStatus },
        },
        handler: async (req) => ({ data: await service.translations(db, req.auth.siteId, req.params.id, req.auth.kind === 'delivery') }),
      }),
      copyToLocale: route({
        method: 'POST',
        url: `${spec.path}/:id/copy-to-locale`,
        config: { scope: `${spec.scope}.create` as never },
        schema: {
          tags,
          operationId: `copy${spec.name}ToLocale`,
          summary: docs.copyToLocale?.summary ?? 'Copy into another locale (same translation group)',
          description: docs.copyToLocale?.description ?? 'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale.',
          params: IdParams,
          body: CopyToLocaleBody,
          response: { 200: one, 409: { $ref: 'Error#', description: 'The translation group already has a member in that locale' } },
        },
        handler: async (req) => ({ data: await service.copyToLocale(db, req.auth.siteId, req.params.id, req.body) }),
      }),
    };
  }

  return { repo, service, routes, schemas: { Schema, CreateBody, UpdateBody, ListQuery: ListQuerySchema } };
}
