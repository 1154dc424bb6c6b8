/** How events are stored (decision AN6): type codes and click flags, shared by the store, the rollups and the reports. */
export const EVENT_TYPES = ['pageview', 'engagement', 'click', 'outbound', 'download', 'form_start', 'form_submit', 'goal', 'cwv'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** The stored `type` code of each event type (1-based; the order above never changes). */
export const TYPE_CODE = Object.fromEntries(EVENT_TYPES.map((t, i) => [t, i + 1])) as Record<EventType, number>;
export const FLAG_RAGE = 1;
export const FLAG_DEAD = 2;
