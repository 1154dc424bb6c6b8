import { Type, type Static } from 'typebox';
import { EVENT_TYPES } from './analytics.store.js';

/** A batch from the tracker (design 1.2). Its events are checked one by one: a wrong one is dropped and counted, not a 422. */
export const Envelope = Type.Object({
  v: Type.Literal(1, { description: 'Payload version' }),
  u: Type.String({ minLength: 8, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://', description: 'The page URL all events of the batch happened on' }),
  r: Type.Optional(Type.String({ maxLength: 2048, description: 'document.referrer' })),
  sw: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'Screen width' })),
  sh: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'Screen height' })),
  lang: Type.Optional(Type.String({ maxLength: 35 })),
  h: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1: hash routing, the fragment is part of the path' })),
  sentAt: Type.Number({ minimum: 0, description: 'Client clock (epoch ms) when the batch was sent' }),
  events: Type.Array(
    Type.Unknown({
      description: `An event \`{ t, pv, at, ... }\`: \`t\` one of ${EVENT_TYPES.join(', ')}; \`pv\` the pageview id (6-16 URL-safe characters); \`at\` its client time (epoch ms); the type's own fields (design analytics.md 1.2). A wrong one is dropped and counted.`,
    }),
    { minItems: 1, maxItems: 50 },
  ),
});
export type Envelope = Static<typeof Envelope>;

export const CollectResult = Type.Object({
  accepted: Type.Integer({ description: 'Events queued for storage' }),
  dropped: Type.Integer({ description: 'Events dropped: wrong, from a bot, a foreign host, an excluded path or address, or with tracking off' }),
});

export const RAW_RETENTION = { minimum: 7, maximum: 365 } as const;
export const AGGREGATE_RETENTION = { minimum: 30, maximum: 3650 } as const;

export const AnalyticsSettings = Type.Object({
  trackingEnabled: Type.Boolean(),
  rawRetentionDays: Type.Integer({ ...RAW_RETENTION, description: 'Days raw events and sessions are kept' }),
  aggregateRetentionDays: Type.Integer({ ...AGGREGATE_RETENTION, description: 'Days daily rollups are kept; at least rawRetentionDays' }),
  excludedPaths: Type.Array(Type.String(), { description: 'Path globs (`*` one segment, `**` anything) whose events are dropped' }),
  excludedIps: Type.Array(Type.String(), { description: 'Addresses and CIDR ranges (IPv4, IPv6) whose events are dropped, canonical' }),
  snippet: Type.String({ description: 'The script tag to paste into every page (read-only)' }),
});

export const AnalyticsSettingsUpdate = Type.Object(
  {
    trackingEnabled: Type.Optional(Type.Boolean()),
    rawRetentionDays: Type.Optional(Type.Integer(RAW_RETENTION)),
    aggregateRetentionDays: Type.Optional(Type.Integer(AGGREGATE_RETENTION)),
    excludedPaths: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500, pattern: '^/' }), { maxItems: 100 })),
    excludedIps: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 100 })),
  },
  { minProperties: 1, examples: [{ rawRetentionDays: 90, excludedPaths: ['/admin/**', '/preview/*'], excludedIps: ['203.0.113.0/24'] }] },
);

export const MAX_IMPORT_EVENTS = 10_000;

export const ImportBody = Type.Object({
  events: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_IMPORT_EVENTS, description: 'Events, each checked on its own (numbered errors)' }),
});

export const ImportResult = Type.Object({
  imported: Type.Integer(),
  skipped: Type.Integer({ description: 'Events whose id was already stored (or repeated in the request)' }),
  errors: Type.Array(Type.Object({ index: Type.Integer(), field: Type.String(), message: Type.String() }), { description: 'The first 1,000 errors' }),
  errorCount: Type.Integer(),
});
