import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './connect.js';
import * as m0001 from './migrations/0001_platform.js';
import * as m0002 from './migrations/0002_tags.js';
import * as m0003 from './migrations/0003_categories.js';
import * as m0004 from './migrations/0004_variables.js';
import * as m0005 from './migrations/0005_single_types.js';
import * as m0006 from './migrations/0006_jobs_outbox.js';
import * as m0007 from './migrations/0007_contents.js';
import * as m0009 from './migrations/0009_contents_search.js';
import * as m0010 from './migrations/0010_webhooks.js';
import * as m0011 from './migrations/0011_content_link_indexes.js';
import * as m0012 from './migrations/0012_content_counts.js';
import * as m0013 from './migrations/0013_token_notify.js';
import * as m0014 from './migrations/0014_retention_indexes.js';
import * as m0015 from './migrations/0015_redirects.js';
import * as m0016 from './migrations/0016_seo_settings.js';
import * as m0017 from './migrations/0017_sitemap_entries.js';
import * as m0018 from './migrations/0018_sitemap_rules_sources.js';
import * as m0019 from './migrations/0019_indexnow.js';
import * as m0020 from './migrations/0020_site_blocks.js';
import * as m0021 from './migrations/0021_forms.js';
import * as m0022 from './migrations/0022_media.js';
import * as m0023 from './migrations/0023_media_references.js';
import * as m0024 from './migrations/0024_site_change_notify.js';
import * as m0025 from './migrations/0025_content_bodies.js';
import * as m0026 from './migrations/0026_users_roles.js';
import * as m0027 from './migrations/0027_cookie_consent.js';
import * as m0028 from './migrations/0028_search_console.js';
import * as m0029 from './migrations/0029_analytics.js';
import * as m0030 from './migrations/0030_seo_change_notify.js';
import * as m0034 from './migrations/0034_idempotency_keys.js';
import * as m0035 from './migrations/0035_site_bundles.js';
import * as m0036 from './migrations/0036_analytics_scan_indexes.js';
import * as m0037 from './migrations/0037_export_heartbeat.js';
import * as m0040 from './migrations/0040_analytics_pair_rollups.js';
import * as m0041 from './migrations/0041_analytics_driving_indexes.js';
import * as m0043 from './migrations/0043_redirect_rules_page_index.js';
import * as m0045 from './migrations/0045_content_counts_slots.js';
import * as m0046 from './migrations/0046_analytics_pair_scroll_cwv.js';
import * as m0047 from './migrations/0047_redirect_rule_versions.js';
import * as m0048 from './migrations/0048_content_link_lists.js';
import * as m0049 from './migrations/0049_drop_revision_created_index.js';
import * as m0050 from './migrations/0050_contents_sort_index_ids.js';

/** Every migration, in order. Listed explicitly so the built service needs no folder scan. */
const MIGRATIONS: Record<
  string,
  {
    up: Migration['up'] extends (db: infer D) => unknown ? (db: D, dialect: 'sqlite' | 'postgres') => Promise<void> : never;
    down?: Migration['up'] extends (db: infer D) => unknown ? (db: D, dialect: 'sqlite' | 'postgres') => Promise<void> : never;
  }
> = {
  '0001_platform': m0001,
  '0002_tags': m0002,
  '0003_categories': m0003,
  '0004_variables': m0004,
  '0005_single_types': m0005,
  '0006_jobs_outbox': m0006,
  '0007_contents': m0007,
  '0009_contents_search': m0009,
  '0010_webhooks': m0010,
  '0011_content_link_indexes': m0011,
  '0012_content_counts': m0012,
  '0013_token_notify': m0013,
  '0014_retention_indexes': m0014,
  '0015_redirects': m0015,
  '0016_seo_settings': m0016,
  '0017_sitemap_entries': m0017,
  '0018_sitemap_rules_sources': m0018,
  '0019_indexnow': m0019,
  '0020_site_blocks': m0020,
  '0021_forms': m0021,
  '0022_media': m0022,
  '0023_media_references': m0023,
  '0024_site_change_notify': m0024,
  '0025_content_bodies': m0025,
  '0026_users_roles': m0026,
  '0027_cookie_consent': m0027,
  '0028_search_console': m0028,
  '0029_analytics': m0029,
  '0030_seo_change_notify': m0030,
  '0034_idempotency_keys': m0034,
  '0035_site_bundles': m0035,
  '0036_analytics_scan_indexes': m0036,
  '0037_export_heartbeat': m0037,
  '0040_analytics_pair_rollups': m0040,
  '0041_analytics_driving_indexes': m0041,
  '0043_redirect_rules_page_index': m0043,
  '0045_content_counts_slots': m0045,
  '0046_analytics_pair_scroll_cwv': m0046,
  '0047_redirect_rule_versions': m0047,
  '0048_content_link_lists': m0048,
  '0049_drop_revision_created_index': m0049,
  '0050_contents_sort_index_ids': m0050,
};

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: 'sqlite' | 'postgres') {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(MIGRATIONS)) {
      const down = m.down;
      out[name] = { up: (db) => m.up(db, this.dialect), ...(down ? { down: (db: Parameters<typeof down>[0]) => down(db, this.dialect) } : {}) };
    }
    return out;
  }
}

function migratorOf(database: Database): Migrator {
  // Kysely looks for its own tables across every schema unless told which one is ours.
  return new Migrator({
    db: database.db,
    provider: new StaticProvider(database.dialect),
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
  });
}

export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = migratorOf(database);
  // Read first, write only when something is pending: the migrator runs in one transaction (on
  // SQLite too, decisions MG1), and on SQLite a transaction takes the write lock at its start, so
  // every start of an up-to-date server would otherwise wait on another process's write lock.
  if ((await migrator.getMigrations()).every((m) => m.executedAt)) return [];
  return run(migrator.migrateToLatest());
}

/** Up to and including `name` (the migration tests: a database as an older release left it). */
export function migrateTo(database: Database, name: keyof typeof MIGRATIONS): Promise<string[]> {
  return run(migratorOf(database).migrateTo(name));
}

async function run(migration: ReturnType<Migrator['migrateToLatest']>): Promise<string[]> {
  const { error, results } = await migration;
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
