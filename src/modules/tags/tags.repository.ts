import type { AutoId, Timestamp } from '../../db/types.js';

export interface TagsTable {
  id: AutoId;
  site_id: string;
  name: string;
  slug: string;
  description: string | null;
  locale: string;
  translation_group: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    tags: TagsTable;
  }
}
