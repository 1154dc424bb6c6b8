import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { type Client, client, expect422, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();

/** A captcha provider on loopback: answers `{ success }` by the token, records what it was sent. */
const verifications: Array<Record<string, string>> = [];
let captchaUrl = '';
let captcha: http.Server;
beforeAll(async () => {
  captcha = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const params = Object.fromEntries(new URLSearchParams(body));
      verifications.push(params);
      if (params.response === 'broken') {
        res.writeHead(500).end('oops');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: params.response === 'good-token' && params.secret === 's3cret' }));
    });
  });
  await new Promise<void>((r) => captcha.listen(0, '127.0.0.1', r));
  captchaUrl = `http://127.0.0.1:${(captcha.address() as AddressInfo).port}/siteverify`;
});
afterAll(() => new Promise<void>((r) => captcha.close(() => r())));

const SCHEMA = [
  { name: 'email', type: 'email', required: true },
  { name: 'message', type: 'textarea' },
];

async function setup(api: Client, formExtra: Record<string, unknown> = {}) {
  const form = (await api.post('/v1/forms', { name: 'Contact', schema: SCHEMA, status: 'active', ...formExtra })).body.data;
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  const submit = (body: Record<string, unknown>, ip = '198.51.100.9') =>
    ctx.app.inject({ method: 'POST', url: '/v1/public/forms/contact/submissions', payload: body, headers: { 'x-site-key': key }, remoteAddress: ip });
  const statuses = async () => (await api.get(`/v1/forms/${form.id}/submissions?sortBy=created_at&sortOrder=asc`)).body.data.map((s: any) => s.status);
  return { form, key, submit, statuses };
}

describe('spam settings (decisions F10)', () => {
  it('reads the defaults, updates partially, normalises words and ranges, never shows the secret', async () => {
    const api = await ctx.site();
    expect((await api.get('/v1/spam/settings')).body).toEqual({
      data: { blockedWords: [], blockedAddresses: [], captchaProvider: null, captchaSiteKey: null, captchaVerifyUrl: null, captchaSecretSet: false },
    });
    const res = await api.put('/v1/spam/settings', {
      blockedWords: [' Casino ', 'casino', 'FREE MONEY'],
      blockedAddresses: ['203.0.113.0/24', '198.51.100.7', '2001:db8::/32'],
      captchaProvider: 'turnstile',
      captchaSiteKey: '0x4AAA',
      captchaSecret: 's3cret',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      blockedWords: ['casino', 'free money'],
      blockedAddresses: ['203.0.113.0/24', '198.51.100.7/32', '2001:db8::/32'],
      captchaProvider: 'turnstile',
      captchaSiteKey: '0x4AAA',
      captchaVerifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
      captchaSecretSet: true,
    });
    expect(JSON.stringify(res.body)).not.toContain('s3cret');
    const stored = await ctx.app.database.db.selectFrom('spam_settings').select('captcha_secret').where('site_id', '=', api.siteId).executeTakeFirstOrThrow();
    expect(stored.captcha_secret).toMatch(/^enc:v1:/);
    expect((await api.put('/v1/spam/settings', { blockedWords: [] })).body.data).toMatchObject({
      blockedWords: [],
      captchaProvider: 'turnstile',
      captchaSecretSet: true,
    });
    expect422(await api.put('/v1/spam/settings', { blockedAddresses: ['10.0.0.0/8', 'not-an-ip'] }), 'VALIDATION_FAILED', ['blockedAddresses[1]']);
    expect422(await api.put('/v1/spam/settings', { captchaProvider: 'other' }), 'VALIDATION_FAILED', ['captchaProvider']);
    expect422(await api.put('/v1/spam/settings', { captchaVerifyUrl: 'ftp://x.test/verify' }), 'VALIDATION_FAILED', ['captchaVerifyUrl']);
    expect422(await api.put('/v1/spam/settings', {}), 'VALIDATION_FAILED', ['body']);
    for (const [scope, call] of [
      ['spam.settings.view', (c: Client) => c.get('/v1/spam/settings')],
      ['spam.settings.update', (c: Client) => c.put('/v1/spam/settings', { blockedWords: ['x'] })],
    ] as const) {
      const denied = await call(client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept(scope) })).token));
      expect(denied.status, scope).toBe(403);
    }
  });

  it('refuses blocked addresses (403, nothing stored) and stores text with blocked words as spam', async () => {
    const api = await ctx.site();
    await api.put('/v1/spam/settings', { blockedWords: ['casino'], blockedAddresses: ['203.0.113.0/24', '2001:db8::/32'] });
    const { form, submit, statuses } = await setup(api);
    const blocked = await submit({ email: 'a@example.com' }, '203.0.113.50');
    expect(blocked.statusCode).toBe(403);
    expectErrorShape(blocked.json(), 403, 'SUBMISSION_BLOCKED');
    expect((await submit({ email: 'a@example.com' }, '2001:db8::1')).statusCode).toBe(403);
    expect((await submit({ email: 'a@example.com' }, '::ffff:203.0.113.9')).statusCode).toBe(403);
    expect((await submit({ email: 'a@example.com', message: 'Best CASINO deals' })).statusCode).toBe(201);
    expect((await submit({ email: 'a@example.com', message: 'Hello' })).statusCode).toBe(201);
    expect(await statuses()).toEqual(['spam', 'new']);
    expect((await api.get(`/v1/forms/${form.id}`)).body.data.submissionCount).toBe(1);
  });

  it('verifies the captcha of a form that asks for it at the configured URL, with the secret and address', async () => {
    const api = await ctx.site();
    await api.put('/v1/spam/settings', { captchaProvider: 'hcaptcha', captchaSiteKey: 'site-key-1', captchaSecret: 's3cret', captchaVerifyUrl: captchaUrl });
    const { submit, statuses, key } = await setup(api, { captchaEnabled: true });
    const read = await client(ctx.app).get('/v1/public/forms/contact', { 'x-site-key': key });
    expect(read.body.data.captcha).toEqual({ provider: 'hcaptcha', siteKey: 'site-key-1' });
    expect422({ status: (await submit({ email: 'a@example.com' })).statusCode, body: (await submit({ email: 'a@example.com' })).json() }, 'CAPTCHA_FAILED', [
      'captchaToken',
    ]);
    const wrong = await submit({ email: 'a@example.com', captchaToken: 'bad-token' });
    expect(wrong.statusCode).toBe(422);
    expectErrorShape(wrong.json(), 422, 'CAPTCHA_FAILED');
    expect((await submit({ email: 'a@example.com', captchaToken: 'good-token' }, '198.51.100.77')).statusCode).toBe(201);
    // The widget's own field name works too (an HTML form post).
    expect((await submit({ email: 'b@example.com', 'h-captcha-response': 'good-token' })).statusCode).toBe(201);
    const down = await submit({ email: 'a@example.com', captchaToken: 'broken' });
    expect(down.statusCode).toBe(503);
    expectErrorShape(down.json(), 503, 'CAPTCHA_UNAVAILABLE');
    expect(verifications.find((v) => v.response === 'good-token')).toEqual({ secret: 's3cret', response: 'good-token', remoteip: '198.51.100.77' });
    expect(await statuses()).toEqual(['new', 'new']);
    // A trapped bot costs no verification.
    const before = verifications.length;
    expect((await submit({ email: 'a@example.com', _gotcha: 'x' })).statusCode).toBe(201);
    expect(verifications.length).toBe(before);
  });
});
