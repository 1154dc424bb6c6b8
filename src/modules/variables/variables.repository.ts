import type { AutoId, Timestamp } from '../../db/types.js';
import type { VariableType } from './variables.calendar.js';

export interface VariablesTable {
  id: AutoId;
  site_id: string;
  key: string;
  label: string;
  value: string;
  type: VariableType;
  description: string | null;
  locale: string;
  translation_group: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    variables: VariablesTable;
  }
}
