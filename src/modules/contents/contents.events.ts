import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import type { EventDescriptions } from '../types.js';

/** `data` of content events: the content as it is after the change (decisions G15). */
const ContentEventData = Type.Object(
  {
    id: Type.Integer({ description: 'The content id' }),
    title: Type.String(),
    slug: Type.String(),
    locale: Type.String({ description: 'BCP 47 language tag' }),
    status: Type.String({ description: 'The status after the change: `published` or `archived`' }),
    publishedAt: Nullable(Timestamp),
    url: Type.Optional(Type.String({ description: 'The public URL of the content, when the site has one' })),
  },
  { additionalProperties: true },
);

const contentExample = (status: string) => ({
  id: 42,
  title: 'Hello world',
  slug: 'hello-world',
  locale: 'en',
  status,
  publishedAt: '2026-11-22T10:00:00.000Z',
});

/** The events of contents, for the webhook catalog. */
export const CONTENT_EVENTS: Pick<EventDescriptions, 'content.published' | 'content.archived'> = {
  'content.published': {
    description: 'A content was published: by POST /contents/bulk/publish, a status change, or the scheduler. One event per content.',
    data: ContentEventData,
    example: contentExample('published'),
  },
  'content.archived': {
    description: 'A content was archived (POST /contents/bulk/archive or a status change). One event per content.',
    data: ContentEventData,
    example: contentExample('archived'),
  },
};
