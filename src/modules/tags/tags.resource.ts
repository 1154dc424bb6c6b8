import { Type } from 'typebox';
import { common, fieldMap } from '../../kit/fields.js';
import { translatableResource } from '../../kit/translatable.js';
import { Nullable } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';
import { linkedContentCounts } from '../contents/content-links.js';
import './tags.repository.js';

const trim = (v: string) => v.trim();

/** Spec "Tag": names and slugs unique per site and locale (decisions G17), translatable (G9, G10). */
export const tagFields = fieldMap({
  id: common.id,
  name: { column: 'name', schema: Type.String(), input: Type.String({ minLength: 1, maxLength: 255 }), create: 'required', write: trim, translated: true },
  slug: {
    column: 'slug',
    schema: Type.String(),
    input: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: SLUG_PATTERN,
      description: 'Lower-case letters, digits and hyphens; generated from the name when omitted',
    }),
  },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 5000 })), translated: true },
  locale: common.locale,
  translationGroup: common.translationGroup,
  contentCount: { schema: Type.Integer({ description: 'Contents linked to this tag' }) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const tags = translatableResource({
  table: 'tags',
  noun: 'tag',
  name: 'Tag',
  plural: 'Tags',
  path: '/tags',
  scope: 'tags',
  fields: tagFields,
  examples: {
    record: {
      id: 7,
      name: 'Hiking',
      slug: 'hiking',
      description: 'Trails, huts and the gear to get there',
      locale: 'en',
      translationGroup: '0b6c3f0e-2f4a-4d8e-9a51-6f2d7c1e8a34',
      contentCount: 12,
      createdAt: '2026-03-02T08:15:00.000Z',
      updatedAt: '2026-03-02T08:15:00.000Z',
    },
    create: { name: 'Hiking', description: 'Trails, huts and the gear to get there' },
  },
  list: {
    sort: ['created_at', 'updated_at', 'name', 'slug'],
    search: ['name', 'slug', 'description'],
    common: ['search', 'slug', 'slugs', 'ids', 'excludeIds', 'locale', 'translationGroup'],
  },
  unique: [
    { field: 'name', code: 'NAME_TAKEN', onCopy: 'locale-suffix' },
    { field: 'slug', code: 'SLUG_TAKEN', onCopy: 'free-slug' },
  ],
  slugFrom: { field: 'name', fallback: 'tag' },
  computed: linkedContentCounts('content_tags'),
  docs: {
    list: { summary: 'List tags with contentCount' },
    delete: { summary: 'Delete a tag; contents lose the association' },
  },
});
