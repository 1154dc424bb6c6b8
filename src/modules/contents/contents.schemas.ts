import { parseJson, toJson } from '../../db/json.js';
import { fieldMap } from '../../kit/fields.js';
import { Type, type Static } from 'typebox';
import { listQuerySchema } from '../../shared/pagination.js';
import { DateFilter, HttpUrl, Id, IdOrText, Locale, UrlOrPath, Nullable, named, PageMeta, ref, Timestamp } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';
import { type Documented, StoredJson } from '../../shared/stored-json.js';

export const STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
export type ContentStatus = (typeof STATUSES)[number];
const Status = Type.Union([Type.Literal('draft'), Type.Literal('scheduled'), Type.Literal('published'), Type.Literal('archived')]);
const Ref = Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String() });
const AnyObject = Type.Object({}, { additionalProperties: true });

export const FeaturedImage = Type.Object({
  url: Type.String(),
  alt: Nullable(Type.String()),
  variants: Nullable(
    Type.Object(
      { thumbnail: Type.String(), card: Type.String(), content: Type.String(), medium: Type.String() },
      {
        description: 'Resized variants (150, 400, 800, 1200 px wide) when the image is a media file of this site',
      },
    ),
  ),
});

export const ContentSummary = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  slug: Type.String(),
  type: Type.Literal('post'),
  status: Status,
  excerpt: Nullable(Type.String()),
  locale: Type.String(),
  translationGroup: Type.String({ format: 'uuid' }),
  featuredImage: Nullable(FeaturedImage),
  // Kept on the row as JSON text (migration 0048) and written into answers as it is (decisions PF13).
  categories: StoredJson(Type.Array(Ref)),
  tags: StoredJson(Type.Array(Ref)),
  author: Nullable(Type.Object({ id: Type.String(), fullName: Type.String() })),
  publishedAt: Nullable(Timestamp),
  scheduledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const FaqItem = Type.Object({ question: Type.String({ minLength: 1, maxLength: 500 }), answer: Type.String({ minLength: 1, maxLength: 5000 }) });
export const StructuredDataInput = Type.Object(
  {
    faq: Type.Optional(Type.Array(FaqItem, { maxItems: 100, description: 'Questions and answers: a FAQPage JSON-LD block' })),
    article: Type.Optional(
      Type.Object({
        enabled: Type.Boolean({ description: 'Emit an Article JSON-LD block' }),
        type: Type.Optional(Type.Union([Type.Literal('Article'), Type.Literal('BlogPosting'), Type.Literal('NewsArticle')])),
      }),
    ),
  },
  { description: 'FAQ and Article JSON-LD settings' },
);

export const ContentDetail = Type.Object({
  ...ContentSummary.properties,
  // The document as stored (decisions N11, PF13).
  body: StoredJson(Nullable(AnyObject)),
  bodyHtml: Type.String(),
  meta: Type.Object({
    metaTitle: Nullable(Type.String()),
    metaDescription: Nullable(Type.String()),
    metaKeywords: Nullable(Type.String()),
    canonicalUrl: Nullable(Type.String()),
    ogImage: Nullable(Type.String()),
  }),
  alternates: Type.Array(Type.Object({ locale: Type.String(), id: Type.Integer(), slug: Type.String() })),
  metadata: AnyObject,
  customData: Nullable(AnyObject),
  structuredData: Type.Object({ faq: Type.Array(FaqItem), article: Type.Object({ enabled: Type.Boolean(), type: Type.String() }) }),
  jsonLd: Type.Array(AnyObject, { description: 'The JSON-LD blocks (Article, FAQPage) built from structuredData' }),
});

const IdList = Type.Array(IdOrText(), { maxItems: 100, uniqueItems: true });

const editable = {
  title: Type.String({ minLength: 1, maxLength: 500 }),
  slug: Type.String({ minLength: 1, maxLength: 500, pattern: SLUG_PATTERN, description: 'Generated from the title when omitted (G17)' }),
  excerpt: Nullable(Type.String({ maxLength: 2000 })),
  body: Nullable(AnyObject),
  bodyMarkdown: Nullable(Type.String({ maxLength: 1_000_000 })),
  status: Status,
  featuredImageUrl: Nullable(UrlOrPath({ maxLength: 2048 })),
  featuredImageAlt: Nullable(Type.String({ maxLength: 500 })),
  scheduledAt: Nullable(Type.String({ format: 'date-time', description: 'ISO 8601 with offset; required and in the future when status is scheduled' })),
  metaTitle: Nullable(Type.String({ maxLength: 255 })),
  metaDescription: Nullable(Type.String({ maxLength: 500 })),
  metaKeywords: Nullable(Type.String({ maxLength: 500, description: 'Comma-separated keywords' })),
  canonicalUrl: Nullable(HttpUrl({ maxLength: 1000 })),
  ogImage: Nullable(UrlOrPath({ maxLength: 1000 })),
  metadata: Nullable(AnyObject),
  categoryIds: IdList,
  tagIds: IdList,
  customData: Nullable(AnyObject),
  structuredData: Nullable(StructuredDataInput),
};

const jsonColumn = { read: (v: unknown) => parseJson(v, null), write: (v: unknown) => (v === null ? null : toJson(v)) };

/**
 * The content columns written as they are sent (API name <-> column), once: the create and update
 * bodies, the insert row, the patch, the revision snapshot, restore and copy-to-locale all come
 * from this map. Status, schedule, body and links have rules of their own in the service.
 */
export const contentFields = fieldMap({
  title: { column: 'title', schema: Type.String(), input: editable.title, create: 'required' },
  slug: { column: 'slug', schema: Type.String(), input: editable.slug },
  excerpt: { column: 'excerpt', schema: Nullable(Type.String()), input: editable.excerpt },
  featuredImageUrl: { column: 'featured_image_url', schema: Nullable(Type.String()), input: editable.featuredImageUrl },
  featuredImageAlt: { column: 'featured_image_alt', schema: Nullable(Type.String()), input: editable.featuredImageAlt },
  metaTitle: { column: 'meta_title', schema: Nullable(Type.String()), input: editable.metaTitle },
  metaDescription: { column: 'meta_description', schema: Nullable(Type.String()), input: editable.metaDescription },
  metaKeywords: { column: 'meta_keywords', schema: Nullable(Type.String()), input: editable.metaKeywords },
  canonicalUrl: { column: 'canonical_url', schema: Nullable(Type.String()), input: editable.canonicalUrl },
  ogImage: { column: 'og_image', schema: Nullable(Type.String()), input: editable.ogImage },
  metadata: { column: 'metadata', schema: Nullable(AnyObject), input: editable.metadata, ...jsonColumn },
  customData: { column: 'custom_data', schema: Nullable(AnyObject), input: editable.customData, ...jsonColumn },
  structuredData: { column: 'structured_data', schema: Nullable(AnyObject), input: editable.structuredData, ...jsonColumn },
});

export const ContentCreate = Type.Object(
  {
    type: Type.Literal('post'),
    ...contentFields.createBody().properties,
    body: Type.Optional(editable.body),
    bodyMarkdown: Type.Optional(editable.bodyMarkdown),
    status: Type.Optional(editable.status),
    scheduledAt: Type.Optional(editable.scheduledAt),
    categoryIds: Type.Optional(editable.categoryIds),
    tagIds: Type.Optional(editable.tagIds),
    locale: Type.Optional(Locale),
    translationGroup: Type.Optional(Type.String({ format: 'uuid', description: 'Join an existing translation group' })),
  },
  {
    examples: [
      {
        type: 'post',
        title: 'Hello world',
        excerpt: 'The first post on the new site.',
        bodyMarkdown: 'Welcome to the **new** site.',
        status: 'draft',
        categoryIds: [3],
        tagIds: [7],
        metaTitle: 'Hello world | Example',
      },
    ],
  },
);

/** The create fields, all optional, without locale and translation group (spec "Update (PUT)"). */
export const ContentUpdate = Type.Partial(Type.Omit(ContentCreate, ['locale', 'translationGroup']), { minProperties: 1 });

export type ContentCreateInput = Static<typeof ContentCreate>;
export type ContentUpdateInput = Static<typeof ContentUpdate>;

const IdArray = (description: string) => Type.Optional(Type.Array(Id(), { maxItems: 100, description }));
export const ContentListFilters = {
  type: Type.Optional(Type.Literal('post')),
  status: Type.Optional(Status),
  contentMode: Type.Optional(
    Type.Union([Type.Literal('standard'), Type.Literal('structured')], { description: 'Contents in a structured category, or in none' }),
  ),
  categoryIds: IdArray('In any of these categories (`categoryIds[]=1&categoryIds[]=2`)'),
  tagIds: IdArray('With any of these tags'),
  authorId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Written by this user' })),
  publishedFrom: Type.Optional({ ...DateFilter, description: 'Published at or after' }),
  publishedTo: Type.Optional({ ...DateFilter, description: 'Published at or before (a bare date includes the day)' }),
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  ids: IdArray('Any of these ids'),
  excludeIds: IdArray('None of these ids'),
  slugs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 100, description: 'Any of these slugs' })),
  uncategorized: Type.Optional(Type.Boolean({ description: 'Only contents without a category (true) or with one (false)' })),
  hasFeaturedImage: Type.Optional(Type.Boolean({ description: 'Only contents with (true) or without (false) a featured image' })),
  locale: Type.Optional(Locale),
  translationGroup: Type.Optional(Type.String({ format: 'uuid' })),
  untagged: Type.Optional(Type.Boolean({ description: 'Only contents without a tag (true) or with one (false)' })),
};

export const SORT_FIELDS = ['created_at', 'updated_at', 'published_at', 'title', 'slug'] as const;
export const ContentListOffsetQuery = listQuerySchema(SORT_FIELDS, ContentListFilters, { defaultSort: 'created_at desc' });
/**
 * The list query, with `cursor` (decisions MP1): the page after the row a `meta.nextCursor`
 * names, read from the sort index without skipping rows (a deep page costs what page 1 costs).
 */
export const ContentListQuery = Type.Object({
  ...ContentListOffsetQuery.properties,
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1200,
      description:
        "A previous page's `meta.nextCursor`: the page after it, in that page's sort and with the same filters. With a cursor `page` must be 1 (or absent) and `meta.currentPage` is null. Not available with `sortBy=published_at`.",
    }),
  ),
});
/** The list query without sorting or cursor: search results come in relevance order (title > slug > body). */
const { sortBy: _sortBy, sortOrder: _sortOrder, ...listWithoutSort } = ContentListOffsetQuery.properties;
export const ContentSearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 500, description: 'Search text: words, never query syntax' }),
  ...listWithoutSort,
});
export type ContentListQueryValue = Static<typeof ContentListQuery>;
export type ContentSearchQueryValue = Static<typeof ContentSearchQuery>;

export const SearchResult = Type.Object({
  ...ContentSummary.properties,
  highlights: Type.Object({
    title: Type.String({ description: 'The title, HTML-escaped, with <mark> around matched words' }),
    body: Type.String({ description: 'A body excerpt, HTML-escaped, with <mark> around matched words' }),
  }),
});

export const BulkIds = Type.Object({
  ids: Type.Array(IdOrText(), {
    minItems: 1,
    maxItems: 50,
    description: '1 to 50 ids; duplicates count once; unknown ids are skipped (G16)',
  }),
});

export const Revision = Type.Object({
  id: Type.Integer(),
  contentId: Type.Integer(),
  action: Type.String({ description: 'create, update, publish, schedule, archive, restore' }),
  changedFields: Type.Array(Type.String()),
  author: Nullable(Type.Object({ id: Type.String(), fullName: Type.String() })),
  createdAt: Timestamp,
});
export const RevisionDetail = Type.Object({ ...Revision.properties, snapshot: AnyObject });
export const RevisionList = Type.Object({ data: Type.Array(ref(named('ContentRevisionSummary', Revision))), meta: PageMeta });
export const RevisionParams = Type.Object({
  id: Id(),
  revisionId: Id(),
});

const FILE = 'https://cms.example.com/files/8d1f4b2a-6c3e-4f70-9a18-2b5c7e9d0f41/e1c0a7f3-94b2-4d6e-8f15-3a2c9b7d6e08/cairn-on-a-hill.webp';
const summaryExample: Documented<Static<typeof ContentSummary>> = {
  id: 42,
  title: 'Hello world',
  slug: 'hello-world',
  type: 'post',
  status: 'published',
  excerpt: 'The first post on the new site.',
  locale: 'en',
  translationGroup: '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60',
  featuredImage: {
    url: FILE,
    alt: 'A cairn on a hill',
    variants: { thumbnail: `${FILE}?w=150`, card: `${FILE}?w=400`, content: `${FILE}?w=800`, medium: `${FILE}?w=1200` },
  },
  categories: [{ id: 3, name: 'News', slug: 'news' }],
  tags: [{ id: 7, name: 'Hiking', slug: 'hiking' }],
  author: { id: '3f8e2b71-5c4d-4a9e-8b16-7d2c9e0f1a53', fullName: 'Ada Lovelace' },
  publishedAt: '2026-03-14T09:30:00.000Z',
  scheduledAt: null,
  createdAt: '2026-03-13T16:02:11.512Z',
  updatedAt: '2026-03-14T09:30:00.000Z',
};

/** The response schemas by name in OpenAPI (components.schemas), with examples for /docs. */
export const ContentRef = named('Content', ContentDetail, [
  {
    ...summaryExample,
    body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Welcome to the new site.' }] }] },
    bodyHtml: '<p>Welcome to the new site.</p>',
    meta: { metaTitle: 'Hello world | Example', metaDescription: 'The first post on the new site.', metaKeywords: null, canonicalUrl: null, ogImage: null },
    alternates: [{ locale: 'de', id: 43, slug: 'hallo-welt' }],
    metadata: {},
    customData: null,
    structuredData: { faq: [], article: { enabled: true, type: 'BlogPosting' } },
    jsonLd: [{ '@context': 'https://schema.org', '@type': 'BlogPosting', headline: 'Hello world', datePublished: '2026-03-14T09:30:00.000Z' }],
  },
]);
export const ContentSummaryRef = named('ContentSummary', ContentSummary, [summaryExample]);
export const SearchResultRef = named('ContentSearchResult', SearchResult);
export const RevisionDetailRef = named('ContentRevision', RevisionDetail);

/** The list's page meta (decisions G5) with the keyset cursor of the next page (decisions MP1). */
const ContentListMeta = named(
  'ContentListMeta',
  Type.Object({
    total: Type.Integer(),
    perPage: Type.Integer(),
    currentPage: Nullable(Type.Integer({ description: 'The page number; null on a page read by `cursor`' })),
    lastPage: Type.Integer({ minimum: 1 }),
    nextCursor: Nullable(
      Type.String({
        description: 'Pass as `cursor` for the next page (same sort and filters): as fast at any depth. Null on the last page and with `sortBy=published_at`.',
      }),
    ),
  }),
);
export const ContentSummaryPage = Type.Object({ data: Type.Array(ref(ContentSummaryRef)), meta: ref(ContentListMeta) }, { title: 'ContentSummaryPage' });

/** The search's page meta (decisions G5) with the candidate bound (decisions MP6). */
const ContentSearchMeta = named(
  'ContentSearchMeta',
  Type.Object({
    total: Type.Integer({ description: 'The matches ranked and paged: every filtered match, or 1,000 when `capped`' }),
    perPage: Type.Integer(),
    currentPage: Type.Integer(),
    lastPage: Type.Integer({ minimum: 1 }),
    capped: Type.Boolean({
      description:
        'True when more than 1,000 contents match: only the newest 1,000 (by id) are ranked and paged, `total` is 1,000 and the number of matches is larger. Add words or filters to narrow the search.',
    }),
  }),
);
export const ContentSearchPage = Type.Object({ data: Type.Array(ref(SearchResultRef)), meta: ref(ContentSearchMeta) }, { title: 'ContentSearchResultPage' });
