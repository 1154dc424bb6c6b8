import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import type { EventDescriptions } from '../types.js';

/** `data` of site-block events: the block as it is after the change. */
const SiteBlockEventData = Type.Object(
  {
    id: Type.Integer({ description: 'The site block id' }),
    name: Type.String(),
    slug: Type.String(),
    type: Type.String({ description: '`global` or `page`' }),
    path: Nullable(Type.String({ description: "A page block's path" })),
    locale: Type.String({ description: 'BCP 47 language tag' }),
    status: Type.String({ description: 'The status after the change: `published` or `draft`' }),
    publishedAt: Nullable(Timestamp),
  },
  { additionalProperties: true },
);

const siteBlockExample = (status: string) => ({
  id: 7,
  name: 'Header',
  slug: 'header',
  type: 'global',
  path: null,
  locale: 'en',
  status,
  publishedAt: status === 'published' ? '2026-11-22T10:00:00.000Z' : null,
});

/** The events of site blocks, for the webhook catalog. */
export const SITE_BLOCK_EVENTS: Pick<EventDescriptions, 'site_block.published' | 'site_block.unpublished'> = {
  'site_block.published': {
    description: 'A site block was published (POST /site-blocks/:slug/publish), or, with staged publishing, its staged edits went live.',
    data: SiteBlockEventData,
    example: siteBlockExample('published'),
  },
  'site_block.unpublished': {
    description: 'A published site block was unpublished (POST /site-blocks/:slug/unpublish): hidden from delivery tokens and public reads.',
    data: SiteBlockEventData,
    example: siteBlockExample('draft'),
  },
};
