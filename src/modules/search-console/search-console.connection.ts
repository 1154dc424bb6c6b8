import { createPrivateKey } from 'node:crypto';
import type { Db } from '../../db/types.js';
import { ensureJob } from '../../jobs/jobs.repository.js';
import { AppError, invalid } from '../../shared/errors.js';
import type { SecretBox } from '../../shared/secrets.js';
import { type Credentials, type GoogleEndpoints, GoogleRefused, GoogleUnavailable, accessToken, permissionLevel, READ_SCOPE } from './search-console.google.js';
import * as repo from './search-console.repository.js';

export const SYNC_JOB = repo.SYNC_JOB_KEY;

export interface ConnectionInput {
  propertyUrl: string;
  credentials: Record<string, unknown>;
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);

/**
 * The credentials as they are stored: only the fields a token request needs. A key file's other
 * fields (`token_uri` above all: following it would let a caller aim the server anywhere) are dropped.
 */
export function parseCredentials(raw: Record<string, unknown>): Credentials {
  if (raw.type === 'service_account') {
    const clientEmail = text(raw.client_email);
    const privateKey = text(raw.private_key);
    if (!clientEmail) throw invalid('VALIDATION_FAILED', 'credentials.client_email', 'A service-account key needs client_email.');
    try {
      if (!privateKey || createPrivateKey(privateKey).asymmetricKeyType !== 'rsa') throw new Error('not RSA');
    } catch {
      throw invalid('VALIDATION_FAILED', 'credentials.private_key', 'A service-account key needs its RSA private_key (PEM).');
    }
    return { type: 'service_account', client_email: clientEmail, private_key: privateKey };
  }
  if (raw.type === 'refresh_token') {
    const fields = { clientId: text(raw.clientId), clientSecret: text(raw.clientSecret), refreshToken: text(raw.refreshToken) };
    for (const [name, value] of Object.entries(fields)) {
      if (!value) throw invalid('VALIDATION_FAILED', `credentials.${name}`, `An OAuth refresh-token credential needs ${name}.`);
    }
    return { type: 'refresh_token', clientId: fields.clientId!, clientSecret: fields.clientSecret!, refreshToken: fields.refreshToken! };
  }
  throw invalid('VALIDATION_FAILED', 'credentials.type', 'credentials.type is `service_account` (a key file) or `refresh_token`.');
}

export function view(row: repo.ConnectionRow | undefined, range: { from: string | null; through: string | null }) {
  const iso = (v: string | null) => (v ? new Date(v).toISOString() : null);
  return {
    connected: Boolean(row),
    propertyUrl: row?.property_url ?? null,
    authType: row?.auth_type ?? null,
    clientEmail: row?.client_email ?? null,
    status: row?.status ?? null,
    lastError: row?.last_error ?? null,
    connectedAt: iso(row?.connected_at ?? null),
    lastSyncAt: iso(row?.last_sync_at ?? null),
    dataFrom: range.from,
    dataThrough: range.through,
  };
}

export async function getConnection(db: Db, siteId: string) {
  return view(await repo.findConnection(db, siteId), await repo.dataRange(db, siteId));
}

/** Queues the site's sync now, unless one is queued or running (decisions SC2: a keyed job). */
export function queueSync(db: Db, siteId: string, at = new Date().toISOString()) {
  return ensureJob(db, { siteId, type: SYNC_JOB, key: SYNC_JOB, payload: '{}', runAt: at, at });
}

/**
 * PUT /integrations/search/connection (decisions SC1): the credentials get an access token and
 * the property's permission from Google before anything is stored; then they are stored
 * encrypted and the first sync is queued. A new property drops the rows synced for the old one.
 */
export async function connect(deps: { db: Db; secrets: SecretBox; google: GoogleEndpoints }, siteId: string, input: ConnectionInput) {
  const credentials = parseCredentials(input.credentials);
  try {
    const token = await accessToken(deps.google, credentials, READ_SCOPE);
    const level = await permissionLevel(deps.google, token, input.propertyUrl);
    if (level === 'siteUnverifiedUser') {
      throw invalid('SEARCH_CONSOLE_PROPERTY_DENIED', 'propertyUrl', `The credentials are an unverified user of ${input.propertyUrl}.`);
    }
  } catch (err) {
    if (err instanceof GoogleRefused) {
      throw err.stage === 'token'
        ? invalid('SEARCH_CONSOLE_AUTH_FAILED', 'credentials', `Google's token endpoint refused the credentials (${err.message}).`)
        : invalid('SEARCH_CONSOLE_PROPERTY_DENIED', 'propertyUrl', `Google refused access to ${input.propertyUrl} (${err.message}).`);
    }
    if (err instanceof GoogleUnavailable) throw new AppError('integration_failed', { message: `Google could not be reached: ${err.message}` });
    throw err;
  }
  const at = new Date().toISOString();
  await deps.db.transaction().execute(async (tx) => {
    const before = await repo.findConnection(tx, siteId);
    if (before && before.property_url !== input.propertyUrl) await repo.deleteConnection(tx, siteId);
    await repo.saveConnection(tx, {
      site_id: siteId,
      property_url: input.propertyUrl,
      auth_type: credentials.type,
      client_email: credentials.type === 'service_account' ? credentials.client_email : null,
      credentials: deps.secrets.encrypt(JSON.stringify(credentials)),
      status: 'syncing',
      last_error: null,
      connected_at: at,
      last_sync_at: before?.property_url === input.propertyUrl ? before.last_sync_at : null,
      backfilled_from: before?.property_url === input.propertyUrl ? before.backfilled_from : null,
      next_sync_at: null,
      indexing_submitted_until: before?.indexing_submitted_until ?? at,
      periods_through: before?.property_url === input.propertyUrl ? before.periods_through : null,
    });
    await queueSync(tx, siteId, at);
  });
  return getConnection(deps.db, siteId);
}

/** The site's connection, or 409 `integration_not_connected` (decisions A2). */
export async function requireConnection(db: Db, siteId: string): Promise<repo.ConnectionRow> {
  const row = await repo.findConnection(db, siteId);
  if (!row) throw new AppError('integration_not_connected');
  return row;
}

export async function disconnect(db: Db, siteId: string) {
  await requireConnection(db, siteId);
  await db.transaction().execute((tx) => repo.deleteConnection(tx, siteId));
  return { message: 'The search console is disconnected; its credentials and synced rows are deleted.' };
}

/** POST /integrations/search/sync: 202 once queued; a refused connection needs a new PUT first. */
export async function requestSync(db: Db, siteId: string) {
  const row = await requireConnection(db, siteId);
  if (row.status === 'error') {
    throw new AppError('integration_failed', { message: `Google refused the stored credentials (${row.last_error}); connect again with PUT.` });
  }
  await queueSync(db, siteId);
  return { data: { queued: true } };
}
