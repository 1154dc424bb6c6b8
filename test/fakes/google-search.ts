import { createVerify, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A local stand-in for Google's token endpoint, Search Console API (sites.get,
 * searchAnalytics.query) and Indexing API, on loopback, for the tests and for trying the group
 * by hand (`npm run fake:search-console`). It checks what Google checks that matters here: a
 * service account's JWT is verified RS256 against the public key registered for its issuer, with
 * the audience and expiry; a refresh token must be one it issued; every API call needs a token it
 * issued (with the indexing scope for the Indexing API). Search analytics rows come from
 * fixtures per property, day and dimension, sorted by clicks and paged by `startRow`/`rowLimit`
 * (at most 25,000). `fail()` makes the next answers 401, 429 or 500. Every request is recorded.
 */
export interface FakeRow {
  keys: string[];
  clicks: number;
  impressions: number;
  ctr?: number;
  position: number;
}

export interface FakeDay {
  totals: { clicks: number; impressions: number; position: number };
  query: FakeRow[];
  page: FakeRow[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

type Target = 'token' | 'sites' | 'query' | 'publish';

const MAX_ROWS = 25_000;

export class FakeGoogle {
  readonly requests: RecordedRequest[] = [];
  readonly published: Array<{ url: string; type: string }> = [];
  /** Permission per property (`siteOwner`, `siteUnverifiedUser`, ...); an unknown property is a 403. */
  readonly properties = new Map<string, string>();
  private readonly serviceAccounts = new Map<string, KeyObject>();
  private readonly refreshTokens = new Set<string>();
  private readonly tokens = new Map<string, string>();
  private readonly data = new Map<string, Map<string, FakeDay>>();
  private failures: Array<{ status: number; on: Target | null; retryAfter?: number }> = [];
  private server: http.Server | null = null;
  url = '';

  /** The configuration that points the service here (`searchConsole` of Config, minus the pacing). */
  get endpoints() {
    return { apiUrl: this.url, tokenUrl: `${this.url}/token`, indexingUrl: this.url };
  }

  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => this.answer(req, raw, res));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A new service account: its key file JSON (with a `token_uri` the service must ignore). */
  serviceAccount(email = `sa-${randomBytes(4).toString('hex')}@project.iam.gserviceaccount.com`, tokenUri = 'http://169.254.169.254/token') {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.serviceAccounts.set(email, publicKey);
    return {
      type: 'service_account',
      project_id: 'project',
      private_key_id: randomBytes(20).toString('hex'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: email,
      client_id: '1234567890',
      token_uri: tokenUri,
    };
  }

  /** OAuth client credentials with a refresh token this fake accepts. */
  refreshToken() {
    const creds = {
      type: 'refresh_token',
      clientId: 'client.apps',
      clientSecret: randomBytes(8).toString('hex'),
      refreshToken: randomBytes(16).toString('hex'),
    };
    this.refreshTokens.add(`${creds.clientId} ${creds.clientSecret} ${creds.refreshToken}`);
    return creds;
  }

  /** Forgets every refresh token and service account: the next token request is refused. */
  revokeAll(): void {
    this.refreshTokens.clear();
    this.serviceAccounts.clear();
    this.tokens.clear();
  }

  setDay(property: string, date: string, day: FakeDay): void {
    if (!this.data.has(property)) this.data.set(property, new Map());
    this.data.get(property)!.set(date, day);
  }

  /** The next `times` answers (of `on`, or of any endpoint) are `status` (401, 403, 429, 500, ...). */
  fail(status: number, times = 1, on: Target | null = null, retryAfter?: number): void {
    for (let i = 0; i < times; i++) this.failures.push({ status, on, retryAfter });
  }

  clearFailures(): void {
    this.failures = [];
  }

  /** The `startRow`s of the searchAnalytics requests for one day and dimension. */
  startRows(date: string, dimension: string): number[] {
    return this.requests
      .filter((r) => r.path.endsWith('/searchAnalytics/query') && r.body.startDate === date && (r.body.dimensions as string[])[0] === dimension)
      .map((r) => r.body.startRow as number);
  }

  private answer(req: http.IncomingMessage, raw: string, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', this.url);
    const form = req.headers['content-type']?.startsWith('application/x-www-form-urlencoded');
    const body: Record<string, unknown> = form ? Object.fromEntries(new URLSearchParams(raw)) : raw ? JSON.parse(raw) : {};
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, body });
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    const target: Target =
      url.pathname === '/token' ? 'token' : url.pathname.endsWith('/searchAnalytics/query') ? 'query' : url.pathname.endsWith(':publish') ? 'publish' : 'sites';
    const failure = this.failures.findIndex((f) => f.on === null || f.on === target);
    if (failure >= 0) {
      const [f] = this.failures.splice(failure, 1);
      const headers: Record<string, string> = f!.retryAfter !== undefined ? { 'retry-after': String(f!.retryAfter) } : {};
      return send(f!.status, { error: { code: f!.status, message: `fake failure ${f!.status}` } }, headers);
    }
    if (target === 'token') return this.token(body, send);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const scopes = token ? this.tokens.get(token) : undefined;
    if (!scopes) return send(401, { error: { code: 401, message: 'Request had invalid authentication credentials.' } });
    if (target === 'publish') {
      if (!scopes.includes('auth/indexing')) return send(403, { error: { code: 403, message: 'Insufficient scope' } });
      this.published.push({ url: String(body.url), type: String(body.type) });
      return send(200, { urlNotificationMetadata: { url: body.url } });
    }
    const property = decodeURIComponent(url.pathname.replace(/^\/webmasters\/v3\/sites\//, '').replace(/\/searchAnalytics\/query$/, ''));
    const level = this.properties.get(property);
    if (!level) return send(403, { error: { code: 403, message: `User does not have sufficient permission for site '${property}'.` } });
    if (target === 'sites') return send(200, { siteUrl: property, permissionLevel: level });
    return this.query(property, body, send);
  }

  private token(body: Record<string, unknown>, send: (status: number, payload: unknown) => void) {
    let scope = 'https://www.googleapis.com/auth/webmasters.readonly';
    if (body.grant_type === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const claims = this.verifyJwt(String(body.assertion ?? ''));
      if (!claims) return send(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      scope = claims.scope;
    } else if (body.grant_type === 'refresh_token') {
      if (!this.refreshTokens.has(`${body.client_id} ${body.client_secret} ${body.refresh_token}`)) {
        return send(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      }
      scope = `${scope} https://www.googleapis.com/auth/indexing`;
    } else return send(400, { error: 'unsupported_grant_type' });
    const token = `ya29.${randomBytes(16).toString('hex')}`;
    this.tokens.set(token, scope);
    return send(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
  }

  /** The claims of a JWT signed RS256 by a registered service account for this token URL, unexpired; else null. */
  private verifyJwt(jwt: string): { scope: string } | null {
    const [head, payload, signature] = jwt.split('.');
    if (!head || !payload || !signature) return null;
    const header = JSON.parse(Buffer.from(head, 'base64url').toString());
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const key = this.serviceAccounts.get(claims.iss);
    if (header.alg !== 'RS256' || !key) return null;
    if (!createVerify('RSA-SHA256').update(`${head}.${payload}`).verify(key, Buffer.from(signature, 'base64url'))) return null;
    const now = Math.floor(Date.now() / 1000);
    if (claims.aud !== `${this.url}/token` || !(claims.exp > now) || claims.iat > now + 60) return null;
    return { scope: String(claims.scope) };
  }

  private query(property: string, body: Record<string, unknown>, send: (status: number, payload: unknown) => void) {
    const rowLimit = Number(body.rowLimit ?? 1000);
    const startRow = Number(body.startRow ?? 0);
    const dimension = (body.dimensions as string[] | undefined)?.[0];
    if (rowLimit > MAX_ROWS || body.dataState !== 'final' || body.type !== 'web' || !dimension) {
      return send(400, { error: { code: 400, message: 'Invalid request' } });
    }
    const days = [...(this.data.get(property) ?? new Map<string, FakeDay>())].filter(([d]) => d >= String(body.startDate) && d <= String(body.endDate));
    let rows: FakeRow[];
    if (dimension === 'date') rows = days.map(([date, day]) => ({ keys: [date], ...day.totals }));
    else rows = days.flatMap(([, day]) => (dimension === 'query' ? day.query : day.page));
    rows = [...rows].sort((a, b) => b.clicks - a.clicks || (a.keys[0]! < b.keys[0]! ? -1 : 1));
    const page = rows.slice(startRow, startRow + rowLimit).map((r) => ({ ...r, ctr: r.impressions ? r.clicks / r.impressions : 0 }));
    return send(200, page.length ? { rows: page, responseAggregationType: 'byProperty' } : { responseAggregationType: 'byProperty' });
  }
}

/** `npm run fake:search-console`: the fake on a fixed port with a service account, a property and 60 days of data. */
async function main() {
  const fake = await new FakeGoogle().start(Number(process.env.FAKE_GOOGLE_PORT ?? 4580));
  const property = process.env.FAKE_GOOGLE_PROPERTY ?? 'sc-domain:example.test';
  fake.properties.set(property, 'siteOwner');
  const keyFile = path.join(os.tmpdir(), `cairn-fake-service-account-${process.pid}.json`);
  writeFileSync(keyFile, JSON.stringify(fake.serviceAccount('cairn@fake.iam.gserviceaccount.com'), null, 2));
  const today = new Date();
  for (let i = 1; i <= 60; i++) {
    const date = new Date(today.getTime() - (i + 2) * 86_400_000).toISOString().slice(0, 10);
    const query = Array.from({ length: 50 }, (_, q) => ({ keys: [`query ${q}`], clicks: (q * i) % 17, impressions: 100 + q, position: 1 + (q % 10) }));
    const page = Array.from({ length: 10 }, (_, p) => ({
      keys: [`https://example.test/page-${p}`],
      clicks: (p * i) % 13,
      impressions: 200 + p,
      position: 2 + p,
    }));
    const sum = (rows: FakeRow[], k: 'clicks' | 'impressions') => rows.reduce((n, r) => n + r[k], 0);
    fake.setDay(property, date, { totals: { clicks: sum(query, 'clicks') + 5, impressions: sum(query, 'impressions') + 50, position: 5.5 }, query, page });
  }
  process.stdout.write(
    [
      `Fake Google APIs on ${fake.url}. Start Cairn with:`,
      `  SEARCH_CONSOLE_API_URL=${fake.url} SEARCH_CONSOLE_TOKEN_URL=${fake.url}/token SEARCH_INDEXING_API_URL=${fake.url} npm run dev`,
      'then connect (the key file below):',
      `  jq -n --arg p '${property}' --slurpfile k ${keyFile} '{propertyUrl: $p, credentials: $k[0]}' | curl -X PUT -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d @- http://localhost:3000/v1/integrations/search/connection`,
      '',
    ].join('\n'),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
