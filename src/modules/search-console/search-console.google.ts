import { createHash, createSign } from 'node:crypto';
import { RetryLater } from '../../jobs/worker.js';

/**
 * Google's token endpoint, Search Console API and Indexing API, spoken with fetch and node:crypto
 * (decisions SC1): no Google SDK, which would follow a key file's `token_uri`. Every URL comes from
 * the operator's configuration (`SEARCH_CONSOLE_*`, `SEARCH_INDEXING_API_URL`).
 */
export interface GoogleEndpoints {
  apiUrl: string;
  tokenUrl: string;
  indexingUrl: string;
}

export type Credentials =
  | { type: 'service_account'; client_email: string; private_key: string }
  | { type: 'refresh_token'; clientId: string; clientSecret: string; refreshToken: string };

export const READ_SCOPE = 'https://www.googleapis.com/auth/webmasters.readonly';
export const INDEXING_SCOPE = 'https://www.googleapis.com/auth/indexing';
const TIMEOUT_MS = 30_000;

/** Google refused the credentials or the property (401, 403, `invalid_grant`): retrying will not help. */
export class GoogleRefused extends Error {
  constructor(
    message: string,
    readonly stage: 'token' | 'property',
  ) {
    super(message);
  }
}

/** Google is busy, failing or unreachable (429, 5xx, network): try again later (after Retry-After when it says). */
export class GoogleUnavailable extends RetryLater {}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A service account's signed JWT assertion (RFC 7523), RS256 over its private key. */
export function signAssertion(creds: { client_email: string; private_key: string }, scope: string, audience: string, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const head = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${base64url(
    JSON.stringify({ iss: creds.client_email, scope, aud: audience, iat, exp: iat + 3600 }),
  )}`;
  const signature = createSign('RSA-SHA256').update(head).sign(creds.private_key);
  return `${head}.${base64url(signature)}`;
}

function retryAfter(res: Response): number | null {
  const value = res.headers.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

async function call(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new GoogleUnavailable(`${new URL(url).host} unreachable: ${(err as Error).message}`.slice(0, 500), null);
  }
}

async function errorText(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: string | { message?: string }; error_description?: string };
    if (typeof body.error === 'string') return [body.error, body.error_description].filter(Boolean).join(': ');
    if (body.error?.message) return body.error.message;
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${res.status}`;
}

/** Throws the error class a non-2xx answer means; 401/403 (and a token endpoint's 400) are refusals. */
async function failure(res: Response, stage: 'token' | 'property'): Promise<never> {
  const text = (await errorText(res)).slice(0, 500);
  if (res.status === 429 || res.status >= 500) throw new GoogleUnavailable(`Google answered ${res.status}: ${text}`, retryAfter(res));
  throw new GoogleRefused(`Google answered ${res.status}: ${text}`, stage);
}

/** Access tokens kept until 60 s before they expire, per credential and scope. */
const tokenCache = new Map<string, { token: string; expiresAt: number }>();

export async function accessToken(endpoints: GoogleEndpoints, creds: Credentials, scope: string): Promise<string> {
  const cacheKey = `${credentialId(creds)} ${endpoints.tokenUrl} ${scope}`;
  const cached = tokenCache.get(cacheKey);
  if (cached && cached.expiresAt > Date.now()) return cached.token;
  const form: Record<string, string> =
    creds.type === 'service_account'
      ? { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signAssertion(creds, scope, endpoints.tokenUrl) }
      : { grant_type: 'refresh_token', client_id: creds.clientId, client_secret: creds.clientSecret, refresh_token: creds.refreshToken };
  const res = await call(endpoints.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  if (!res.ok) return failure(res, 'token');
  const body = (await res.json()) as { access_token?: string; expires_in?: number };
  if (!body.access_token) throw new GoogleRefused('The token endpoint answered no access_token', 'token');
  tokenCache.set(cacheKey, { token: body.access_token, expiresAt: Date.now() + ((body.expires_in ?? 3600) - 60) * 1000 });
  return body.access_token;
}

const credentialId = (creds: Credentials) => createHash('sha256').update(JSON.stringify(creds)).digest('base64url');

/** Forgets the cached tokens of a credential (after Google refused it). */
export function forgetTokens(creds: Credentials): void {
  const id = `${credentialId(creds)} `;
  for (const key of tokenCache.keys()) if (key.startsWith(id)) tokenCache.delete(key);
}

async function apiJson<T>(url: string, token: string, body?: unknown): Promise<T> {
  const res = await call(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) return failure(res, 'property');
  return (await res.json()) as T;
}

const siteUrl = (endpoints: GoogleEndpoints, property: string) => `${endpoints.apiUrl}/webmasters/v3/sites/${encodeURIComponent(property)}`;

/** `sites.get`: the token's permission on the property (`siteOwner`, `siteFullUser`, `siteRestrictedUser`, `siteUnverifiedUser`). */
export async function permissionLevel(endpoints: GoogleEndpoints, token: string, property: string): Promise<string> {
  const body = await apiJson<{ permissionLevel?: string }>(siteUrl(endpoints, property), token);
  return body.permissionLevel ?? 'siteUnverifiedUser';
}

export interface AnalyticsRow {
  keys: string[];
  clicks: number;
  impressions: number;
  position: number;
}

export interface AnalyticsQuery {
  startDate: string;
  endDate: string;
  dimension: 'date' | 'query' | 'page';
}

export const ROWS_PER_REQUEST = 25_000;

/**
 * `searchAnalytics.query` of final web data for one dimension, every page of it: `startRow` moves
 * on while a page comes back full, up to `maxRows`. `pace` runs before each request.
 */
export async function queryAll(
  endpoints: GoogleEndpoints,
  token: string,
  property: string,
  query: AnalyticsQuery,
  options: { maxRows: number; pace: () => Promise<void> },
): Promise<AnalyticsRow[]> {
  const rows: AnalyticsRow[] = [];
  for (let startRow = 0; startRow < options.maxRows; startRow += ROWS_PER_REQUEST) {
    await options.pace();
    const rowLimit = Math.min(ROWS_PER_REQUEST, options.maxRows - startRow);
    const body = await apiJson<{ rows?: AnalyticsRow[] }>(`${siteUrl(endpoints, property)}/searchAnalytics/query`, token, {
      startDate: query.startDate,
      endDate: query.endDate,
      dimensions: [query.dimension],
      type: 'web',
      dataState: 'final',
      rowLimit,
      startRow,
    });
    const page = body.rows ?? [];
    rows.push(...page);
    if (page.length < rowLimit) break;
  }
  return rows;
}

/** The Indexing API's `urlNotifications.publish`. */
export async function publishUrl(endpoints: GoogleEndpoints, token: string, url: string, type: 'URL_UPDATED' | 'URL_DELETED'): Promise<void> {
  await apiJson(`${endpoints.indexingUrl}/v3/urlNotifications:publish`, token, { url, type });
}
