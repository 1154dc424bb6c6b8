import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, type TestContext } from '../helpers/app.js';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { client } from '../helpers/http.js';

/**
 * A real browser (Chromium from Debian, driven by playwright-core) posting a site's plain HTML
 * form to the public submission endpoint and following the 303 back to the site (decisions F3,
 * F6). Chromium is installed by .ci/run; on a machine without it the test says so and is skipped,
 * but under CI it must run.
 */
let ctx: TestContext;
let apiBase = '';
let site: http.Server;
let siteBase = '';
let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
let page = '';

describe.skipIf(!chromiumAvailable)('an HTML form posted by a real browser', () => {
  beforeAll(async () => {
    ctx = await buildTestApp();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    apiBase = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    // The site's front end: serves the form page and the thank-you page.
    site = http.createServer((req, res) => {
      if (req.url?.startsWith('/thanks')) res.writeHead(200, { 'content-type': 'text/html' }).end('<h1 id="done">Thank you!</h1>');
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteBase = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    ({ browser, close: closeBrowser } = await launchChromium());
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
    await ctx?.close();
  });

  it('submits the fields a visitor fills in, is sent to the thank-you page, and the submission is stored', async () => {
    const s = await createSiteWithToken(ctx.app);
    const api = client(ctx.app, s.token);
    const form = await api.post('/v1/forms', {
      name: 'Contact',
      status: 'active',
      redirectUrl: `${siteBase}/thanks`,
      schema: [
        { name: 'name', type: 'text', required: true },
        { name: 'email', type: 'email', required: true },
        { name: 'topics', type: 'checkbox', options: ['tea', 'coffee', 'cake'] },
        { name: 'rating', type: 'rating' },
        { name: 'message', type: 'textarea' },
        { name: 'consent', type: 'checkbox', required: true },
      ],
    });
    expect(form.status, JSON.stringify(form.body)).toBe(201);
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    page = `<!doctype html><meta charset="utf-8"><title>Contact</title>
      <form method="post" action="${apiBase}/v1/public/forms/contact/submissions?siteKey=${key}">
        <input name="name" id="name">
        <input name="email" id="email" type="email">
        <label><input type="checkbox" name="topics" value="tea" id="tea"> Tea</label>
        <label><input type="checkbox" name="topics" value="coffee"> Coffee</label>
        <label><input type="checkbox" name="topics" value="cake" id="cake"> Cake</label>
        <select name="rating" id="rating"><option>3</option><option>4</option><option>5</option></select>
        <textarea name="message" id="message"></textarea>
        <input type="checkbox" name="consent" id="consent">
        <input type="text" name="_gotcha" style="display:none" tabindex="-1" autocomplete="off">
        <button type="submit" id="send">Send</button>
      </form>`;
    const tab = await browser.newPage();
    await tab.goto(`${siteBase}/contact`);
    await tab.fill('#name', 'Zoë Ünal');
    await tab.fill('#email', 'zoe@example.com');
    await tab.check('#tea');
    await tab.check('#cake');
    await tab.selectOption('#rating', '5');
    await tab.fill('#message', 'Line one\nLine two & "quotes"');
    await tab.check('#consent');
    await Promise.all([tab.waitForURL(`${siteBase}/thanks`), tab.click('#send')]);
    expect(await tab.textContent('#done')).toBe('Thank you!');
    await tab.close();

    const [stored] = (await api.get(`/v1/forms/${form.body.data.id}/submissions`)).body.data;
    expect(stored).toMatchObject({
      status: 'new',
      data: { name: 'Zoë Ünal', email: 'zoe@example.com', topics: ['tea', 'cake'], rating: 5, message: 'Line one\r\nLine two & "quotes"', consent: true },
      ipAddress: '127.0.0.1',
    });
    expect(stored.userAgent).toContain('Chrome');
  }, 60_000);
});
