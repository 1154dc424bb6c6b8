import { Type } from 'typebox';
import type { EventDescriptions } from '../types.js';

const Counts = Type.Object({ created: Type.Integer(), updated: Type.Integer(), unchanged: Type.Integer() });

/** `data` of `site.imported`: what the import changed, per group of records (decisions BX12). */
const SiteImportedData = Type.Object(
  {
    sourceSiteId: Type.String({ format: 'uuid', description: 'The site the bundle was exported from' }),
    bundleCreatedAt: Type.String({ description: 'When the bundle was made (ISO 8601)' }),
    formatVersion: Type.Integer(),
    created: Type.Integer({ description: 'Records created, all groups together' }),
    updated: Type.Integer({ description: 'Records updated, all groups together' }),
    unchanged: Type.Integer({ description: 'Records left as they were' }),
    groups: Type.Record(Type.String(), Counts, { description: 'Per group (table) of records: created, updated, unchanged' }),
  },
  { additionalProperties: true },
);

/** The event of site bundles, for the webhook catalog. */
export const BUNDLE_EVENTS: Pick<EventDescriptions, 'site.imported'> = {
  'site.imported': {
    description:
      'A site bundle was imported into the site (`cairn sites import`) and changed something: one summary event per import, in its transaction; the records it wrote emit no events of their own (no content.published per imported post). A dry run, or an import that changed nothing, emits nothing.',
    data: SiteImportedData,
    example: {
      sourceSiteId: '0b6f3c1e-8a2d-4f4e-9c71-5d2a8e6b9f10',
      bundleCreatedAt: '2026-11-26T10:00:00.000Z',
      formatVersion: 1,
      created: 120,
      updated: 3,
      unchanged: 0,
      groups: { contents: { created: 100, updated: 0, unchanged: 0 }, categories: { created: 20, updated: 3, unchanged: 0 } },
    },
  },
};
