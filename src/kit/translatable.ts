import type { RouteOptions } from 'fastify';
import { type TProperties, Type, type TSchema } from 'typebox';
import type { Db, Executor } from '../db/types.js';
import type { ErrorCode } from '../shared/errors.js';
import { CopyToLocaleBody, Data, Locale, ref, TranslationStatus, Uuid } from '../shared/schemas.js';
import { getSiteLocales, resolveLocale } from '../shared/site-locales.js';
import { findFreeSlug, type LocaleSlugTable, slugify, slugsInLocale } from '../shared/slug.js';
import { assertLocaleFree, copyTargetLocale, groupMembers, newTranslationGroup, translationStatus } from '../shared/translations/index.js';
import type { Fields } from './fields.js';
import { type CrudRoute, type ResourceRules, type ResourceSpec, resource, type RouteDocs, type RowOf, route, type TableName } from './resource.js';

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

/** The plain resource's rules (create's `row` carries the resolved `locale`), plus `copy`. */
export interface TranslatableRules<T extends TableName> extends Omit<ResourceRules<T>, 'create'> {
  /** Before the insert: check the body, complete or adjust `row`. */
  create?(tx: Executor, ctx: { siteId: string; locale: string; input: Row; row: Row }): Promise<void> | void;
  /** Before the copy's insert: adjust `row` for the target locale. */
  copy?(tx: Executor, ctx: { siteId: string; current: RowOf<T>; target: string; row: Row }): Promise<void> | void;
}

/** A plain resource (resource.ts) on a table with `locale` and `translation_group`. */
export interface TranslatableSpec<T extends TableName, F extends Fields, P extends TProperties = {}>
  extends Omit<ResourceSpec<T, F, P>, 'unique' | 'uniqueWithin' | 'rules' | 'hooks' | 'id' | 'docs'> {
  /** Unique per site and locale, with what copy-to-locale does about a taken value. */
  unique?: readonly UniqueRule[];
  /** Generate the slug from this field when the create body has none (e.g. name; fallback "tag"). */
  slugFrom?: { field: string; fallback: string };
  rules?: TranslatableRules<T>;
  docs?: Partial<Record<CrudRoute | 'copyToLocale', RouteDocs>>;
}

export type RouteName = CrudRoute | 'translations' | 'copyToLocale';

const GROUP_TAKEN = { $ref: 'Error#', description: 'The translation group already has a member in that locale' };

/**
 * The resource kit for translatable groups (decisions G5, G6, G9, G10, G17): the plain resource
 * with locale-scoped unique fields, a locale and translation group on create, the slug generated
 * from a field, and two more routes: translation status and copy-to-locale.
 */
export function translatableResource<T extends TableName, F extends Fields, P extends TProperties = {}>(spec: TranslatableSpec<T, F, P>) {
  const fields = spec.fields;
  const unique = spec.unique ?? [];
  const freeSlug = (tx: Executor, siteId: string, locale: string, base: string) =>
    findFreeSlug(base, (c) => slugsInLocale(tx, spec.table as LocaleSlugTable, siteId, locale, c));
  const rules = spec.rules ?? {};

  const base = resource(
    {
      ...spec,
      uniqueWithin: ['locale'],
      rules: {
        ...rules,
        create: (tx, { siteId, input, row }) => rules.create?.(tx, { siteId, locale: row.locale, input, row }),
      },
    },
    {
      createBody: {
        locale: Type.Optional({ ...Locale, description: "The record's locale (default: the site's default locale)" } as TSchema),
        translationGroup: Type.Optional({ ...Uuid, description: 'Join an existing translation group' } as TSchema),
      },
      start: async (db, siteId, input) => ({ locale: resolveLocale(await getSiteLocales(db, siteId), input.locale) }),
      async complete(tx, siteId, input, row) {
        if (spec.slugFrom && !row.slug) {
          const from = String(row[fields.column(spec.slugFrom.field as keyof F & string)]);
          row.slug = await freeSlug(tx, siteId, row.locale, slugify(from) || spec.slugFrom.fallback);
        }
        if (input.translationGroup) await assertLocaleFree(tx, spec.table, siteId, input.translationGroup, row.locale);
        row.translation_group = input.translationGroup ?? newTranslationGroup();
      },
      createResponses: { 409: GROUP_TAKEN },
    },
  );
  const { repo, service: plain } = base;

  const service = {
    ...plain,

    /** Status per enabled locale (decisions G10): the translated fields filled in the source must be filled in each member. */
    async translations(db: Executor, siteId: string, id: number, delivered: boolean) {
      const current: Row = await plain.getRow(db, siteId, id, delivered);
      const { enabledLocales } = await getSiteLocales(db, siteId);
      const members = await groupMembers<Row>(db, spec.table, siteId, current.translation_group);
      const member = (r: Row) => ({ locale: r.locale as string, fields: fields.translatedValues(r) });
      return translationStatus(member(current), members.map(member), enabledLocales);
    },

    /** A copy in the target locale, in the same group; 409 when that locale has a member (decisions G10). */
    async copyToLocale(db: Db, siteId: string, id: number, body: { targetLocale?: string; locale?: string }) {
      const target = copyTargetLocale(await getSiteLocales(db, siteId), body);
      return db.transaction().execute(async (tx) => {
        const current = await plain.getRow(tx, siteId, id);
        const { translation_group } = current as Row;
        await assertLocaleFree(tx, spec.table, siteId, translation_group, target);
        const row: Row = { ...fields.insertRow(fields.toApi(current)), site_id: siteId, locale: target, translation_group };
        for (const u of unique) {
          const column = fields.column(u.field as keyof F & string);
          if (u.onCopy === 'free-slug') row[column] = await freeSlug(tx, siteId, target, row[column]);
          else if ((await repo.clashes(tx, siteId, { locale: target }, { [column]: row[column] })).length) {
            if (u.onCopy === 'refuse') throw plain.uniqueError(u, row[column], { locale: target });
            row[column] = `${row[column]} (${target})`;
          }
        }
        await rules.copy?.(tx, { siteId, current, target, row });
        return plain.get(tx, siteId, await plain.insert(tx, row));
      });
    },
  };

  /** The seven routes, as data; a module registers each one (and may replace one with its own). */
  function routes(db: Db): Record<RouteName, RouteOptions> {
    const r = base.routes(db);
    const docs = spec.docs?.copyToLocale;
    const { tags, schemas } = base;
    return {
      ...r,
      translations: route({
        method: 'GET',
        url: `${spec.path}/:id/translations`,
        config: { scope: `${spec.scope}.view` as never },
        schema: {
          tags,
          operationId: `get${spec.name}Translations`,
          summary: 'Translation status per enabled locale',
          params: schemas.Params,
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
          summary: docs?.summary ?? 'Copy into another locale (same translation group)',
          description: docs?.description ?? 'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale.',
          params: schemas.Params,
          body: CopyToLocaleBody,
          response: { 200: Data(ref(schemas.Schema)), 409: GROUP_TAKEN },
        },
        handler: async (req) => ({ data: await service.copyToLocale(db, req.auth.siteId, req.params.id, req.body) }),
      }),
    };
  }

  return { repo, service, routes, schemas: base.schemas };
}
