import { Type } from 'typebox';
import type { EventDescriptions } from '../types.js';

/** `data` of media events: the file as it is (uploaded) or was (deleted). */
const MediaEventData = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    filename: Type.String(),
    mimeType: Type.String(),
    size: Type.Integer(),
  },
  { additionalProperties: true },
);
const mediaExample = { id: '5b0e8c4e-2f7a-4e57-9a57-0d1c8f0a3b21', filename: 'sunset.jpg', mimeType: 'image/jpeg', size: 482113 };

/** The events of the media library (media.deleted is also sent for the files of a deleted folder), for the webhook catalog. */
export const MEDIA_EVENTS: Pick<EventDescriptions, 'media.uploaded' | 'media.replaced' | 'media.deleted'> = {
  'media.uploaded': { description: 'A file was uploaded to the media library (POST /media/upload).', data: MediaEventData, example: mediaExample },
  'media.replaced': {
    description: 'A file got new bytes under the same id and URL (POST /media/:id/replace); its ETag changed.',
    data: MediaEventData,
    example: mediaExample,
  },
  'media.deleted': {
    description: 'A file was removed for good: force-deleted, in an emptied trash or purged 30 days after it was trashed, or with its folder.',
    data: MediaEventData,
    example: mediaExample,
  },
};
