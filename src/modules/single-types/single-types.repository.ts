import type { AutoId, Json, Timestamp } from '../../db/types.js';

export interface SingleTypesTable {
  id: AutoId;
  site_id: string;
  slug: string;
  name: string;
  description: string | null;
  locale: string;
  data: Json<Record<string, unknown>>;
  schema: Json<unknown[]> | null;
  body: Json<Record<string, unknown>> | null;
  body_html: string;
  meta_title: string | null;
  meta_description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    single_types: SingleTypesTable;
  }
}
