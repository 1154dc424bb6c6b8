import { Type } from 'typebox';
import { parseJson } from '../../db/json.js';
import { common, fieldMap } from '../../kit/fields.js';
import { type ListSpec, listQueryFor } from '../../kit/repository.js';
import { Id, Locale, Nullable, SiteKeyParam, Timestamp, Uuid, named } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';
import './site-blocks.repository.js';

export const BLOCK_TYPES = ['global', 'page'] as const;
export const BLOCK_STATUSES = ['draft', 'published'] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

const union = <T extends string>(values: readonly T[], description: string) => Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const FieldDefinition = Type.Object({}, { additionalProperties: true, description: 'A field definition `{ name, type, label?, required?, ... }`' });
/** `[...]` or `{ fields: [...] }`. */
export const FieldSchemaInput = Type.Union([Type.Array(FieldDefinition), Type.Object({ fields: Type.Array(FieldDefinition) })], {
  description:
    'Field definitions: 17 types, `items` of arrays, nested objects, at most 250 fields per level and 5 levels (decisions B1); dataSource fields `{ name, type: "dataSource", label, source, filters?, limit? }` (B2)',
});
const PagePath = Type.String({
  minLength: 1,
  maxLength: 500,
  description: "A page block's path on the site, e.g. `/about` (starts with `/`; no query string; a trailing slash is dropped). Unique per locale",
});

/** Spec "Site block" (decisions B1, B2, G10, G17): one field map for the API shape and the rows. */
export const siteBlockFields = fieldMap({
  id: common.id,
  name: { column: 'name', schema: Type.String() },
  slug: { column: 'slug', schema: Type.String({ description: 'Permanent; generated from the name when omitted' }) },
  type: { column: 'type', schema: union(BLOCK_TYPES, '`global` (header, footer, sidebar) or `page` (a standalone page with a path)') },
  status: { column: 'status', schema: union(BLOCK_STATUSES, '`draft` or `published`') },
  path: { column: 'path', schema: Nullable(Type.String({ description: "A page block's path; null for global blocks" })) },
  locale: common.locale,
  translationGroup: common.translationGroup,
  schema: { column: 'schema', schema: Type.Array(FieldDefinition), read: (v: unknown) => parseJson(v, []), summary: false },
  data: {
    column: 'data',
    schema: Type.Object({}, { additionalProperties: true, description: 'Field values; dataSource fields hold the records they resolve to' }),
    read: (v: unknown) => parseJson(v, {}),
    summary: false,
  },
  hasUnpublishedChanges: {
    column: 'has_unpublished_changes',
    schema: Type.Boolean({ description: 'With staged publishing: the working data differs from what delivery reads serve until the next publish' }),
    read: Boolean,
  },
  publishedAt: { column: 'published_at', schema: Nullable(Timestamp) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

const siteBlockExample = {
  id: 9,
  name: 'About us',
  slug: 'about-us',
  type: 'page' as const,
  status: 'published' as const,
  path: '/about',
  locale: 'en',
  translationGroup: '2c7a9e14-3b5f-4d80-a6c2-8e1f0b4d7a93',
  schema: [
    { name: 'heading', type: 'text', label: 'Heading', required: true },
    { name: 'intro', type: 'richtext', label: 'Introduction' },
  ],
  data: { heading: 'Who we are', intro: '<p>A small team building calm software.</p>' },
  hasUnpublishedChanges: false,
  publishedAt: '2026-02-02T10:00:00.000Z',
  createdAt: '2026-02-01T15:30:00.000Z',
  updatedAt: '2026-02-02T10:00:00.000Z',
};
const { schema: _schema, data: _data, ...siteBlockSummaryExample } = siteBlockExample;
export const SiteBlock = named('SiteBlock', siteBlockFields.response(), [siteBlockExample]);
export const SiteBlockSummary = named('SiteBlockSummary', siteBlockFields.summaryResponse(), [siteBlockSummaryExample]);

export const siteBlockList = {
  sort: ['created_at', 'updated_at', 'name', 'slug', 'path', 'published_at'],
  search: ['name', 'slug', 'path'],
  common: ['search', 'slug', 'slugs', 'ids', 'excludeIds', 'locale', 'translationGroup'],
  filters: {
    type: Type.Optional(union(BLOCK_TYPES, 'Only `global` or only `page` blocks')),
    status: Type.Optional(union(BLOCK_STATUSES, 'Only drafts or only published blocks')),
    path: Type.Optional({ ...PagePath, description: 'The page block with this path' }),
  },
  apply: (qb, query: { type?: string; status?: string; path?: string; publishedOnly?: boolean }) => {
    let q = qb;
    if (query.type) q = q.where('type', '=', query.type);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.path) q = q.where('path', '=', query.path);
    return q;
  },
} satisfies ListSpec<any, any>;

export const SiteBlockListQuery = listQueryFor(siteBlockList);

export const SiteBlockCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slug: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: SLUG_PATTERN,
      description: 'Lower-case letters, digits and hyphens; generated from the name when omitted; permanent',
    }),
  ),
  type: union(BLOCK_TYPES, '`global` or `page`'),
  path: Type.Optional(Nullable({ ...PagePath, description: 'Required for page blocks; global blocks have none' })),
  schema: Type.Optional(FieldSchemaInput),
  locale: Type.Optional({ ...Locale, description: "The block's locale (default: the site's default locale)" }),
  translationGroup: Type.Optional({ ...Uuid, description: 'Join an existing translation group' }),
});

export const SiteBlockUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    slug: Type.Optional(Type.String({ description: 'Permanent: accepted only when equal to the current slug' })),
    type: Type.Optional(union(BLOCK_TYPES, 'A page block needs a path; a block that becomes global loses it')),
    path: Type.Optional(Nullable(PagePath)),
  },
  { minProperties: 1 },
);

export const SchemaBody = Type.Object({ schema: FieldSchemaInput });
export const DataBody = Type.Object({
  data: Type.Object(
    {},
    {
      additionalProperties: true,
      description: 'Only the fields that change: merged into the stored data (objects deeply, other values replaced); `null` clears a field',
    },
  ),
});

export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 255 }) });
export const LocaleQuery = Type.Object({
  locale: Type.Optional({ ...Locale, description: "The block's locale (default: the site's default locale)" }),
});
export const PathQuery = Type.Object({
  path: Type.String({
    minLength: 1,
    maxLength: 600,
    description: 'The path a front end routes, e.g. `/about` or `/de/about` (a locale prefix picks the locale when `locale` is omitted)',
  }),
  locale: Type.Optional(Locale),
});
export const PublicPathQuery = Type.Object({ ...PathQuery.properties, siteKey: SiteKeyParam });
export const PublicSlugQuery = Type.Object({ ...LocaleQuery.properties, siteKey: SiteKeyParam });

export const RevisionParams = Type.Object({ slug: SlugParams.properties.slug, revisionId: Id() });
export const FieldChange = Type.Object({
  field: Type.String({ description: 'Dotted path into the data, e.g. `hero.title`' }),
  from: Type.Unknown(),
  to: Type.Unknown(),
});
export const SiteBlockRevision = named(
  'SiteBlockRevision',
  Type.Object({
    id: Type.Integer(),
    siteBlockId: Type.Integer(),
    action: Type.String({ description: '`update` (PUT data) or `restore`' }),
    changes: Type.Array(FieldChange, { description: 'Only the fields that changed' }),
    author: Nullable(Type.Object({ id: Type.String(), fullName: Type.String() })),
    createdAt: Timestamp,
  }),
);

export const SiteBlockSettings = named(
  'SiteBlockSettings',
  Type.Object({
    stagedPublishing: Type.Boolean({
      description:
        "Off (the spec's default): data edited on a published block is live at once. On: a published block keeps serving its published snapshot to delivery tokens and public reads until it is published again",
    }),
  }),
);
export const SiteBlockSettingsBody = Type.Object({ stagedPublishing: Type.Boolean() });
