import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Idempotency keys (issue 36 item 13, decisions HR4): the answer a create gave, stored in the
 * same transaction as its write, per site, token and key, so a retry with the same key and body
 * within 24 hours gets that answer again instead of a second write. `request_hash` is a SHA-256
 * of the method, path and body; a key older than 24 hours is ignored and swept (by `created_at`).
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('idempotency_keys'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('token_id', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('status_code', 'integer', (col) => col.notNull())
    .addColumn('content_type', 'text')
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('idempotency_keys_site_token_key_uq').unique().on('idempotency_keys').columns(['site_id', 'token_id', 'key']).execute();
  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
