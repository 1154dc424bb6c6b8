import type { ColumnType, Generated, Kysely } from 'kysely';

/**
 * Row types of every table, as Kysely sees them. Timestamps are ISO 8601 strings on both
 * dialects (PostgreSQL timestamptz values are mapped to strings in db/connect.ts); booleans are
 * 0/1 on SQLite and true/false on PostgreSQL, so read them through `Boolean()`; JSON columns are
 * text on SQLite and jsonb on PostgreSQL, read them through `parseJson` (db/json.ts).
 */
export type Timestamp = string;
export type Bool = ColumnType<boolean | number, boolean, boolean>;
export type Json<T = unknown> = ColumnType<T | string, string, string>;

export interface SitesTable {
  id: string;
  name: string;
  domain: string;
  slug: string;
  description: string | null;
  logo_url: string | null;
  favicon_url: string | null;
  timezone: string;
  is_active: Bool;
  show_branding: Bool;
  preview_url: string | null;
  organization_id: string | null;
  public_key: string;
  default_locale: string;
  multi_language_enabled: Bool;
  enabled_locales: Json<string[]>;
  detection_enabled: Bool;
  detection_order: Json<string[]>;
  cookie_name: string;
  cookie_max_age: number;
  redirect_to_default: Bool;
  hide_default_locale: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: string;
  site_id: string;
  full_name: string;
  /** Lower-cased, unique per site. */
  email: string | null;
  role_id: string;
  is_active: Bool;
  /** Exactly one user of a site is its owner (a partial unique index). */
  is_owner: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RolesTable {
  id: string;
  site_id: string;
  slug: string;
  name: string;
  description: string | null;
  scopes: Json<string[]>;
  /** The owner role: every scope, cannot be changed or deleted (decisions U1). */
  is_system: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiTokensTable {
  id: string;
  site_id: string;
  user_id: string;
  name: string;
  kind: 'management' | 'delivery';
  secret_hash: string;
  scopes: Json<string[]>;
  last_used_at: Timestamp | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
  description: string | null;
  updated_at: Timestamp;
  regenerated_at: Timestamp | null;
  /** The token that made this one through the API, for audit (null: the CLI). */
  created_by_token_id: string | null;
}

export interface NotificationSettingsTable {
  site_id: string;
  form_submission: Bool;
  new_review: Bool;
  review_approved: Bool;
  content_published: Bool;
  recipient_emails: Json<string[]>;
  updated_at: Timestamp;
}

export interface DB {
  sites: SitesTable;
  users: UsersTable;
  roles: RolesTable;
  api_tokens: ApiTokensTable;
  notification_settings: NotificationSettingsTable;
}

export type Db = Kysely<DB>;
/** Either the root handle or a transaction: repositories accept both. */
export type Executor = Kysely<DB>;
export type AutoId = Generated<number>;
