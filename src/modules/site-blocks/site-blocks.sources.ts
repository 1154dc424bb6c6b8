import { Type, type TObject } from 'typebox';
import type { Executor } from '../../db/types.js';
import { compileSchema } from '../../plugins/validation.js';
import { validationFieldErrors } from '../../plugins/errors.js';
import { issuesError } from '../../shared/errors.js';
import { DEFAULT_DATA_SOURCE_LIMIT, type DataSourceName, type FieldDefinition, type FieldIssue } from '../../shared/field-schema/index.js';
import { categories } from '../categories/categories.resource.js';
import { ContentListOffsetQuery } from '../contents/contents.schemas.js';
import { forms } from '../forms/forms.resource.js';
import { listContentSummaries } from '../contents/contents.service.js';
import { tags } from '../tags/tags.resource.js';
import { variables } from '../variables/variables.resource.js';
import { type Audience, listSiteBlocks } from './site-blocks.list.js';
import { SiteBlockListQuery } from './site-blocks.resource.js';

/**
 * dataSource fields (decisions B2): each names a group, that group's list filters and a limit;
 * on read it holds the summaries the group's list answers for those filters (page 1), published
 * records only for delivery tokens and public reads. One list call per field, each a fixed
 * number of queries whatever the limit (the lists are built that way; contents are not counted,
 * nothing shows a total), at most 10 fields per schema and 100 records per field.
 */
interface Source {
  /** The group's list query without paging: what `filters` may hold. */
  filters: TObject;
  list(db: Executor, siteId: string, query: Record<string, any>, audience: Audience): Promise<{ data: unknown[] }>;
}

const withoutPaging = (query: TObject): TObject => {
  const { page: _page, limit: _limit, ...rest } = query.properties;
  return Type.Object(rest, { additionalProperties: false });
};

const SOURCES: Record<DataSourceName, Source> = {
  contents: {
    filters: withoutPaging(ContentListOffsetQuery),
    list: (db, siteId, query, audience) =>
      listContentSummaries(
        db,
        { siteId, userId: '', access: 'all', kind: audience === 'published' ? 'delivery' : 'management', scopes: new Set() },
        query as never,
      ),
  },
  categories: {
    filters: withoutPaging(categories.schemas.ListQuery),
    list: (db, siteId, query, audience) => categories.service.list(db, siteId, query as never, audience === 'published'),
  },
  tags: {
    filters: withoutPaging(tags.schemas.ListQuery),
    list: (db, siteId, query, audience) => tags.service.list(db, siteId, query as never, audience === 'published'),
  },
  variables: {
    filters: withoutPaging(variables.schemas.ListQuery),
    list: (db, siteId, query, audience) => variables.service.list(db, siteId, query as never, audience === 'published'),
  },
  siteBlocks: { filters: withoutPaging(SiteBlockListQuery), list: (db, siteId, query, audience) => listSiteBlocks(db, siteId, query as never, audience) },
  // Delivery tokens and public reads see active forms only (G13).
  forms: {
    filters: withoutPaging(forms.schemas.ListQuery),
    list: (db, siteId, query, audience) => forms.service.list(db, siteId, query as never, audience === 'published'),
  },
};

const validators = new Map<DataSourceName, ReturnType<typeof compileSchema>>();
function validatorOf(name: DataSourceName, source: Source) {
  let v = validators.get(name);
  if (!v) validators.set(name, (v = compileSchema(source.filters, 'text')));
  return v;
}

type Visit = (def: FieldDefinition, path: string, holder: string[]) => void;

/** Every dataSource field of a schema, with its schema path and the data keys leading to it. */
function eachDataSource(schema: readonly FieldDefinition[], visit: Visit, path = 'schema', holder: string[] = []): void {
  schema.forEach((def, i) => {
    if (def.type === 'dataSource') visit(def, `${path}[${i}]`, [...holder, def.name]);
    else if (def.type === 'object' && Array.isArray(def.fields)) eachDataSource(def.fields, visit, `${path}[${i}].fields`, [...holder, def.name]);
  });
}

/**
 * Checks each dataSource field's source and filters against its group's list, and stores the
 * filters as that list reads them (`"3"` becomes 3, unknown filters are dropped). 422 SCHEMA_INVALID
 * with paths like `schema[2].filters.categoryIds[0]`.
 */
export function checkDataSources(schema: FieldDefinition[]): void {
  const issues: FieldIssue[] = [];
  eachDataSource(schema, (def, path) => {
    const name = def.source as DataSourceName;
    const source = SOURCES[name];
    if (def.filters === undefined) return;
    const filters = structuredClone(def.filters);
    const validate = validatorOf(name, source);
    if (validate(filters)) {
      def.filters = filters;
      return;
    }
    for (const [field, messages] of Object.entries(validationFieldErrors((validate.errors ?? []) as never))) {
      issues.push({ path: field === 'body' ? `${path}.filters` : `${path}.filters.${field}`, message: messages[0]! });
    }
  });
  if (issues.length) throw issuesError('SCHEMA_INVALID', issues);
}

/**
 * The data as a reader sees it: each dataSource field set to its records, all fields resolved
 * side by side.
 */
export async function resolveDataSources(db: Executor, siteId: string, schema: readonly FieldDefinition[], data: Record<string, unknown>, audience: Audience) {
  const jobs: Array<{ holder: string[]; def: FieldDefinition }> = [];
  eachDataSource(schema, (def, _path, holder) => jobs.push({ holder, def }));
  if (!jobs.length) return data;
  const out = structuredClone(data);
  const results = await Promise.all(
    jobs.map(({ def }) => {
      return SOURCES[def.source as DataSourceName].list(db, siteId, { ...def.filters, page: 1, limit: def.limit ?? DEFAULT_DATA_SOURCE_LIMIT }, audience);
    }),
  );
  jobs.forEach(({ holder }, i) => {
    let target = out as Record<string, unknown>;
    for (const key of holder.slice(0, -1)) {
      const next = target[key];
      target = (next && typeof next === 'object' && !Array.isArray(next) ? next : (target[key] = {})) as Record<string, unknown>;
    }
    target[holder.at(-1)!] = results[i]!.data;
  });
  return out;
}
