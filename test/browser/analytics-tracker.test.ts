import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsOf } from '../../src/modules/analytics/analytics.routes.js';
import { eventsOf as storedEvents } from '../helpers/analytics.js';
import { buildTestApp, createSiteWithToken, type TestContext } from '../helpers/app.js';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.js';
import { client } from '../helpers/http.js';

/**
 * The analytics tracker (`script.js`, `cwv.js`, design analytics.md 1.4) in real Chromium. The
 * site's pages come from one loopback server, the scripts and the collector from another (so the
 * tracker posts across origins, as it does in production); the collector stand-in records exactly
 * what the browser sent: method, content type, `?siteKey=`, `Sec-Fetch-Mode` (`no-cors` for a
 * beacon, `cors` for fetch) and the body. Each test uses its own site key to find its batches.
 */
// isbot flags HeadlessChrome: the collector would drop every event of the default user agent.
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const ASSETS = path.resolve(import.meta.dirname, '../../src/modules/analytics/public');

interface Received {
  method: string;
  contentType: string | undefined;
  siteKey: string | null;
  mode: string | undefined;
  body: any;
}

const received: Received[] = [];
const pages = new Map<string, string>();
let site: http.Server;
let api: http.Server;
let siteBase = '';
let apiBase = '';
let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;

function serve(handler: http.RequestListener): Promise<[http.Server, string]> {
  const server = http.createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve([server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`])));
}

/** The page of test `name`, served at /t/<name>/ and every path below it (SPA routes reload fine). */
function definePage(name: string, body: string, attributes = '') {
  pages.set(
    name,
    `<!doctype html><html><head><meta charset="utf-8"><title>${name}</title>
    <style>body{margin:0;font:16px sans-serif}</style>
    <script defer src="${apiBase}/v1/public/analytics/script.js" data-site-key="pk_${name}" ${attributes}></script></head>
    <body>${body}</body></html>`,
  );
  return `${siteBase}/t/${name}/`;
}

/** The batches of one site key so far, each with its events. */
const batches = (name: string) => received.filter((r) => r.siteKey === `pk_${name}` && r.method === 'POST');
const events = (name: string) => batches(name).flatMap((b) => b.body.events.map((e: any) => ({ ...e, u: b.body.u, mode: b.mode })));

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(received.slice(-6))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const eventsOf = (name: string, type: string, count: number) =>
  until(`${count} ${type} event(s) of ${name}`, () => {
    const found = events(name).filter((e) => e.t === type);
    return found.length >= count && found;
  });

/** What a browser does when the tab is hidden (switching tabs), which headless Chromium never does by itself. */
const hide = (tab: Page) =>
  tab.evaluate(`Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'))`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!chromiumAvailable)('the analytics tracker in a real browser', () => {
  beforeAll(async () => {
    [site, siteBase] = await serve((req, res) => {
      const name = /^\/t\/([^/]+)\//.exec(req.url ?? '')?.[1];
      const page = (name && pages.get(name)) || '<!doctype html><title>Elsewhere</title>';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    [api, apiBase] = await serve((req, res) => {
      const url = new URL(req.url ?? '/', apiBase);
      const asset = /^\/v1\/public\/analytics\/(script|cwv)\.js$/.exec(url.pathname);
      if (req.method === 'GET' && asset) {
        res.writeHead(200, { 'content-type': 'application/javascript; charset=utf-8' }).end(readFileSync(path.join(ASSETS, `${asset[1]}.js`)));
        return;
      }
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        if (url.pathname === '/v1/public/analytics/events') {
          received.push({
            method: req.method!,
            contentType: req.headers['content-type'],
            siteKey: url.searchParams.get('siteKey'),
            mode: req.headers['sec-fetch-mode'] as string | undefined,
            body: raw ? JSON.parse(raw) : null,
          });
        }
        res.writeHead(202, { 'content-type': 'application/json', 'access-control-allow-origin': req.headers.origin ?? '*' }).end('{"accepted":0,"dropped":0}');
      });
    });
    ({ browser, close: closeBrowser } = await launchChromium({
      userAgent: USER_AGENT,
      locale: 'de-DE',
      viewport: { width: 1280, height: 720 },
      screen: { width: 1440, height: 900 },
      // Playwright turns the back/forward cache off by default; the tracker must see its restores.
      ignoreDefaultArgs: ['--disable-back-forward-cache'],
    }));
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    for (const server of [site, api]) await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  it('sends a pageview on load at once (fetch, text/plain, the site key in the query) with the envelope of A3', async () => {
    const url = definePage('load', '<h1>Post A</h1>');
    const tab = await browser.newPage();
    const before = Date.now();
    await tab.goto(`${url}blog/a?utm_source=news#section-2`, { referer: 'https://www.google.com/' });
    const [batch] = await until('the first batch', () => batches('load').length > 0 && batches('load'));
    await tab.close();

    expect(batch!.contentType).toBe('text/plain;charset=UTF-8');
    expect(batch!.mode).toBe('cors');
    const { sentAt, events: sent, ...envelope } = batch!.body;
    // The fragment stays in the browser outside hash mode; the query is the server's to trim.
    expect(envelope).toEqual({ v: 1, u: `${url}blog/a?utm_source=news`, r: 'https://www.google.com/', sw: 1440, sh: 900, lang: 'de-DE' });
    expect(sentAt).toBeGreaterThanOrEqual(before);
    expect(sentAt).toBeLessThanOrEqual(Date.now());
    expect(sent).toHaveLength(1);
    expect(Object.keys(sent[0]).sort()).toEqual(['at', 'pv', 't']);
    expect(sent[0].t).toBe('pageview');
    expect(sent[0].pv).toMatch(/^[0-9a-z]{6,16}$/);
    expect(sent[0].at).toBeGreaterThanOrEqual(before);
    expect(sent[0].at).toBeLessThanOrEqual(sentAt);
    expect(received.filter((r) => r.method === 'OPTIONS')).toEqual([]);
  });

  it('counts SPA navigations: pushState and popstate to another path, not a query change or a hash outside hash mode', async () => {
    const url = definePage('spa', '<h1>App</h1>');
    const tab = await browser.newPage();
    await tab.goto(`${url}home`);
    await eventsOf('spa', 'pageview', 1);
    await tab.evaluate("history.replaceState({}, '', location.pathname + '?tab=2')");
    await tab.evaluate("location.hash = '#top'");
    await tab.evaluate("history.pushState({}, '', 'docs')");
    await eventsOf('spa', 'pageview', 2);
    await tab.evaluate('history.back()');
    const views = await eventsOf('spa', 'pageview', 3);
    await sleep(300);
    await tab.close();

    expect(views.map((v) => v.u)).toEqual([`${url}home`, `${url}docs`, `${url}home?tab=2`]);
    expect(new Set(views.map((v) => v.pv)).size).toBe(3);
    // Each later pageview names the page before it as its referrer, and comes after that page's engagement.
    const pageviewBatches = batches('spa').filter((b) => b.body.events[0].t === 'pageview');
    expect(pageviewBatches.map((b) => b.body.r)).toEqual([undefined, `${url}home`, `${url}docs`]);
    const all = events('spa');
    expect(all.filter((e) => e.t === 'pageview')).toHaveLength(3);
    for (const e of all.filter((x) => x.t === 'engagement')) {
      const view = views.find((v) => v.pv === e.pv)!;
      expect(e.u, 'an engagement is sent with the page it measured').toBe(view.u);
      const next = views[views.indexOf(view) + 1];
      if (next) expect(all.indexOf(e)).toBeLessThan(all.findIndex((x) => x.pv === next.pv));
    }
  });

  it('counts a page restored from the back/forward cache as a new pageview', async () => {
    const url = definePage('bfcache', '<h1>Cached</h1>');
    const tab = await browser.newPage();
    await tab.goto(`${url}first`);
    await eventsOf('bfcache', 'pageview', 1);
    await tab.goto(`${url}second`);
    await eventsOf('bfcache', 'pageview', 2);
    await tab.goBack({ waitUntil: 'commit' });
    const views = await eventsOf('bfcache', 'pageview', 3);
    await tab.close();
    expect(views.map((v) => v.u)).toEqual([`${url}first`, `${url}second`, `${url}first`]);
    expect(new Set(views.map((v) => v.pv)).size).toBe(3);
  });

  it('in hash mode counts a hash change as a pageview and marks the batch h: 1', async () => {
    const url = definePage('hash', '<h1>Hash app</h1>', 'data-hash');
    const tab = await browser.newPage();
    await tab.goto(`${url}#/home`);
    await eventsOf('hash', 'pageview', 1);
    await tab.evaluate("location.hash = '#/settings'");
    const views = await eventsOf('hash', 'pageview', 2);
    await tab.close();
    expect(views.map((v) => v.u)).toEqual([`${url}#/home`, `${url}#/settings`]);
    for (const b of batches('hash')) expect(b.body.h).toBe(1);
  });

  it('sends engaged time and scroll depth when the tab is hidden, with sendBeacon', async () => {
    const url = definePage('engage', '<div style="height:3000px">tall</div>');
    const tab = await browser.newPage();
    await tab.goto(url);
    await eventsOf('engage', 'pageview', 1);
    const shownAt = Date.now();
    await tab.mouse.move(300, 300);
    await tab.mouse.wheel(0, 1000);
    await tab.waitForFunction('scrollY === 1000');
    await sleep(1200);
    await hide(tab);
    const [engagement] = await eventsOf('engage', 'engagement', 1);
    const elapsed = Date.now() - shownAt;
    const [pageview] = events('engage');
    await tab.close();

    expect(engagement.pv).toBe(pageview.pv);
    expect(engagement.mode).toBe('no-cors');
    // The deepest point seen: (1000 + 720) / 3000 of the page = 57.3 %.
    expect(engagement.sd).toBe(57);
    expect(engagement.ms).toBeGreaterThanOrEqual(1200);
    expect(engagement.ms).toBeLessThanOrEqual(elapsed + 1000);
    expect(Object.keys(engagement).sort()).toEqual(['at', 'mode', 'ms', 'pv', 'sd', 't', 'u']);
  });

  it('counts a triple click once as a rage click, and tells a dead click from a live one', async () => {
    const url = definePage(
      'clicks',
      `<main><section class="cards wide">
        <div class="card" style="position:absolute;left:0;top:100px;width:200px;height:50px">one</div>
        <div class="card" style="position:absolute;left:400px;top:1200px;width:200px;height:50px"><p style="margin:0">two</p></div>
      </section></main>
      <button id="rage" style="position:absolute;left:100px;top:300px;width:100px;height:40px">Nothing</button>
      <button data-cairn-id="add-row" style="position:absolute;left:300px;top:300px;width:100px;height:40px"
        onclick="document.body.appendChild(document.createElement('hr'))"><span>Add</span></button>
      <div style="height:2000px"></div>`,
    );
    const tab = await browser.newPage();
    await tab.goto(url);
    await eventsOf('clicks', 'pageview', 1);
    // The live click first: a DOM change makes every click waiting at that moment live.
    await tab.mouse.click(350, 320);
    await tab.mouse.click(150, 320, { clickCount: 3 });
    // A fourth click of the same burst is no second rage click.
    await tab.mouse.click(152, 322);
    // A scroll within 100 ms of a click would make it live.
    await sleep(150);
    await tab.evaluate('scrollTo(0, 1000)');
    await tab.waitForFunction('scrollY === 1000');
    await sleep(150);
    await tab.mouse.click(450, 210);
    const width = (await tab.evaluate('document.documentElement.scrollWidth')) as number;
    // Classified 2.5 s after each click, then sent with the next flush: the hide.
    await sleep(2700);
    await hide(tab);
    const clicks = await eventsOf('clicks', 'click', 6);
    await tab.close();

    const round4 = (n: number) => Math.round(n * 1e4) / 1e4;
    const rage = { t: 'click', x: round4(150 / width), y: 320, vw: 1280, sel: '#rage', dead: 1 };
    expect(clicks.map(({ pv: _pv, at: _at, u: _u, mode: _mode, ...rest }) => rest)).toEqual([
      { t: 'click', x: round4(350 / width), y: 320, vw: 1280, sel: '[data-cairn-id="add-row"]', rage: 0, dead: 0 },
      { ...rage, rage: 0 },
      { ...rage, rage: 0 },
      { ...rage, rage: 1 },
      { ...rage, x: round4(152 / width), y: 322, rage: 0 },
      // Page coordinates: 210 px into the viewport, 1,000 px scrolled.
      { t: 'click', x: round4(450 / width), y: 1210, vw: 1280, sel: 'body > main > section.cards.wide > div.card:nth-of-type(2) > p', rage: 0, dead: 1 },
    ]);
    const [pageview] = events('clicks');
    for (const c of clicks) expect(c.pv).toBe(pageview.pv);
  });

  it('sends outbound links with their query and downloads without it, at once', async () => {
    const url = definePage(
      'links',
      `<a id="out" href="https://example.org/pricing?plan=pro">Elsewhere</a>
       <a id="pdf" href="/files/report.pdf?session=1">Report</a>
       <a id="zip" href="/get" download>Archive</a>
       <a id="inside" href="/t/links/about">About</a>
       <script>document.addEventListener('click', (e) => e.preventDefault())</script>`,
      'data-clicks="off"',
    );
    const tab = await browser.newPage();
    await tab.goto(url);
    await eventsOf('links', 'pageview', 1);
    for (const id of ['out', 'pdf', 'zip', 'inside']) await tab.click(`#${id}`);
    await eventsOf('links', 'download', 2);
    await eventsOf('links', 'outbound', 1);
    await sleep(200);
    await tab.close();
    // data-clicks="off": no click events; the link events still go (engagement follows on close).
    expect(
      events('links')
        .filter((e) => e.t !== 'engagement')
        .map(({ t, url: to, mode }) => ({ t, url: to, mode })),
    ).toEqual([
      { t: 'pageview', url: undefined, mode: 'cors' },
      { t: 'outbound', url: 'https://example.org/pricing?plan=pro', mode: 'cors' },
      { t: 'download', url: `${siteBase}/files/report.pdf`, mode: 'cors' },
      { t: 'download', url: `${siteBase}/get`, mode: 'cors' },
    ]);
  });

  it('sends form_start once per form and pageview, and form_submit, keyed by a Cairn form slug or data-cairn-form', async () => {
    const url = definePage(
      'forms',
      `<form id="signup" action="${apiBase}/v1/public/forms/newsletter/submissions?siteKey=pk_x"><input id="email" name="email"><button id="send">Send</button></form>
       <form data-cairn-form="contact-us" id="other"><input id="name" name="name"></form>
       <script>document.addEventListener('submit', (e) => e.preventDefault())</script>`,
    );
    const tab = await browser.newPage();
    await tab.goto(url);
    await eventsOf('forms', 'pageview', 1);
    await tab.focus('#email');
    await tab.focus('#name');
    await tab.focus('#email');
    await tab.fill('#email', 'a@example.com');
    await tab.click('#send');
    await eventsOf('forms', 'form_submit', 1);
    await hide(tab);
    await eventsOf('forms', 'click', 1);
    await tab.close();
    const forms = events('forms').filter((e) => e.t.startsWith('form_'));
    expect(forms.map(({ t, form }) => ({ t, form }))).toEqual([
      { t: 'form_start', form: 'newsletter' },
      { t: 'form_start', form: 'contact-us' },
      { t: 'form_submit', form: 'newsletter' },
    ]);
    // A click on a form field or its button is never dead.
    expect(events('forms').find((e) => e.t === 'click').dead).toBe(0);
  });

  it('with data-require-consent sends nothing until consent, then every held event with its own page', async () => {
    const url = definePage('consent', '<h1>Consent</h1>', 'data-require-consent');
    const tab = await browser.newPage();
    await tab.goto(`${url}one`);
    await tab.evaluate("history.pushState({}, '', 'two')");
    await tab.evaluate("cairn('goal', 'Signup')");
    await hide(tab);
    await sleep(500);
    expect(batches('consent')).toEqual([]);
    await tab.evaluate("dispatchEvent(new Event('cairn:consent'))");
    const views = await eventsOf('consent', 'pageview', 2);
    await eventsOf('consent', 'goal', 1);
    await tab.close();
    expect(views.map((v) => v.u)).toEqual([`${url}one`, `${url}two`]);
    const goal = events('consent').find((e) => e.t === 'goal');
    expect(goal).toMatchObject({ name: 'Signup', pv: views[1].pv, u: `${url}two` });
  });

  it('sends nothing for a visitor who opted out (localStorage.cairn_ignore)', async () => {
    const url = definePage('ignored', '<h1>Owner</h1>');
    const tab = await browser.newPage();
    await tab.goto(`${url}setup`);
    await tab.evaluate("localStorage.setItem('cairn_ignore', 'true')");
    await tab.goto(url);
    await tab.evaluate("history.pushState({}, '', 'next')");
    await hide(tab);
    await tab.evaluate("localStorage.removeItem('cairn_ignore')");
    await sleep(500);
    // The first visit, before the opt-out, was counted; nothing after it.
    expect(events('ignored').filter((e) => e.t === 'pageview')).toHaveLength(1);
    expect(events('ignored').filter((e) => e.u !== `${url}setup`)).toEqual([]);
    await tab.close();
  });

  it('sends queued events (a goal) with sendBeacon on pagehide when the visitor leaves', async () => {
    const url = definePage('leave', '<h1>Leave</h1>');
    const tab = await browser.newPage();
    await tab.goto(url);
    const [pageview] = await eventsOf('leave', 'pageview', 1);
    await tab.evaluate("cairn('goal', 'Download brochure')");
    await sleep(300);
    expect(events('leave').map((e) => e.t)).toEqual(['pageview']);
    await tab.goto(`${siteBase}/t/elsewhere/`);
    const [goal] = await eventsOf('leave', 'goal', 1);
    await tab.close();
    expect(goal).toMatchObject({ t: 'goal', name: 'Download brochure', pv: pageview.pv, mode: 'no-cors', u: url });
    const beacon = batches('leave').find((b) => b.body.events.some((e: any) => e.t === 'goal'))!;
    expect(beacon.contentType).toBe('text/plain;charset=UTF-8');
    expect(beacon.body.events.map((e: any) => e.t)).toEqual(['goal', 'engagement']);
  });

  it('batches: 20 waiting events go at once in one request, the rest wait for the next flush', async () => {
    const url = definePage('batch', '<h1>Goals</h1>');
    const tab = await browser.newPage();
    await tab.goto(url);
    await eventsOf('batch', 'pageview', 1);
    await tab.evaluate("for (let i = 1; i <= 25; i++) cairn('goal', 'goal ' + i)");
    const goals = await eventsOf('batch', 'goal', 20);
    await sleep(300);
    expect(batches('batch').map((b) => b.body.events.length)).toEqual([1, 20]);
    expect(goals.map((g) => g.name)).toEqual(Array.from({ length: 20 }, (_, i) => `goal ${i + 1}`));
    expect(goals[0].mode).toBe('cors');
    await hide(tab);
    const all = await eventsOf('batch', 'goal', 25);
    await tab.close();
    const last = batches('batch')[2]!;
    expect(last.mode).toBe('no-cors');
    expect(last.body.events.map((e: any) => e.name ?? e.t)).toEqual(['goal 21', 'goal 22', 'goal 23', 'goal 24', 'goal 25', 'engagement']);
    expect(all).toHaveLength(25);
  });

  it('cwv.js reports LCP, FCP, TTFB, CLS, INP and FID as cwv events of the pageview', async () => {
    const url = definePage(
      'cwv',
      // A late banner shifts the heading (CLS); the button's handler takes 120 ms (INP).
      `<div id="banner"></div><h1 style="font-size:64px">Largest text on the page</h1>
       <button id="go" onclick="const end = performance.now() + 120; while (performance.now() < end);">Go</button>
       <script>setTimeout(() => (document.getElementById('banner').style.height = '300px'), 200)</script>`,
      'data-cwv',
    );
    const tab = await browser.newPage();
    await tab.goto(url);
    const [pageview] = await eventsOf('cwv', 'pageview', 1);
    await tab.waitForFunction("[...document.scripts].some((s) => s.src.endsWith('/cwv.js'))");
    await sleep(500);
    await tab.click('#go');
    // web-vitals reads the interaction in an idle callback (at most 1 s after the next paint); a page hidden sooner reports no INP.
    await sleep(2500);
    await hide(tab);
    const vitals = await until('six vitals', () => {
      const found = events('cwv').filter((e) => e.t === 'cwv');
      return new Set(found.map((e) => e.name)).size >= 6 && found;
    });
    await tab.close();
    const byName = Object.fromEntries(vitals.map((v) => [v.name, v]));
    expect(Object.keys(byName).sort()).toEqual(['CLS', 'FCP', 'FID', 'INP', 'LCP', 'TTFB']);
    for (const v of vitals) {
      expect(v.pv).toBe(pageview.pv);
      expect(v.u).toBe(url);
      expect(typeof v.value).toBe('number');
      expect(v.value).toBeGreaterThanOrEqual(0);
      expect(v.value).toBeLessThanOrEqual(v.name === 'CLS' ? 100 : 60_000);
      if (v.name !== 'CLS') expect(Number.isInteger(v.value)).toBe(true);
    }
    expect(byName.LCP.value).toBeGreaterThanOrEqual(byName.FCP.value);
    expect(byName.FCP.value).toBeGreaterThan(0);
    expect(byName.CLS.value).toBeGreaterThan(0);
    expect(byName.INP.value).toBeGreaterThanOrEqual(120);
  });
  // Last: Playwright's clock belongs to the browser context, so every later page would run on it.
  it('sends a waiting event after 10 s and a heartbeat engagement every 240 s while the page is shown (browser clock run forward)', async () => {
    const url = definePage('timers', '<h1>Reading</h1>');
    const tab = await browser.newPage();
    await tab.clock.install();
    await tab.goto(url);
    await eventsOf('timers', 'pageview', 1);
    await tab.evaluate("cairn('goal', 'Read')");
    await tab.clock.runFor(9_000);
    await sleep(300);
    expect(events('timers').map((e) => e.t)).toEqual(['pageview']);
    await tab.clock.runFor(1_000);
    await eventsOf('timers', 'goal', 1);
    await tab.clock.runFor(230_000);
    const [heartbeat] = await eventsOf('timers', 'engagement', 1);
    await tab.close();
    expect(heartbeat.mode).toBe('cors');
    // Shown and focused the whole 240 s the browser's clock ran (plus the real milliseconds of the test).
    expect(heartbeat.ms).toBeGreaterThanOrEqual(239_000);
    expect(heartbeat.ms).toBeLessThan(250_000);
  });
});

describe.skipIf(!chromiumAvailable)('the analytics tracker through the real collector', () => {
  let ctx: TestContext;
  let appPort = 0;
  /** Between the browser and the app: records each collector answer as the app sent it (DevTools cannot read a keepalive request's answer). */
  let proxy: http.Server;
  let proxyBase = '';
  let front: http.Server;
  let frontBase = '';
  let html = '';
  let chrome: Awaited<ReturnType<typeof launchChromium>>;
  const answers: Array<{ status: number; sent: number; body: any }> = [];

  beforeAll(async () => {
    ctx = await buildTestApp();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    appPort = (ctx.app.server.address() as AddressInfo).port;
    [proxy, proxyBase] = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const sentBody = Buffer.concat(chunks);
        const forward = http.request({ host: '127.0.0.1', port: appPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          const got: Buffer[] = [];
          answer.on('data', (c) => got.push(c));
          answer.on('end', () => {
            const body = Buffer.concat(got);
            if (req.method === 'POST' && req.url?.startsWith('/v1/public/analytics/events')) {
              answers.push({ status: answer.statusCode!, sent: JSON.parse(sentBody.toString()).events.length, body: JSON.parse(body.toString()) });
            }
            res.writeHead(answer.statusCode!, answer.headers).end(body);
          });
        });
        forward.end(sentBody);
      });
    });
    [front, frontBase] = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
    chrome = await launchChromium({ userAgent: USER_AGENT });
  }, 60_000);

  afterAll(async () => {
    await chrome?.close();
    for (const server of [front, proxy]) await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await ctx?.close();
  });

  it('loads script.js from the service and every batch it posts is accepted whole (202, dropped 0) and stored', async () => {
    const s = await createSiteWithToken(ctx.app, { domain: frontBase.slice('http://'.length) });
    const key = (await client(ctx.app, s.token).get('/v1/site/info')).body.data.publicKey;
    html = `<!doctype html><meta charset="utf-8"><title>Shop</title>
      <script defer src="${proxyBase}/v1/public/analytics/script.js" data-site-key="${key}"></script>
      <button id="add" onclick="document.body.appendChild(document.createElement('p'))">Add</button>
      <form data-cairn-form="newsletter"><input id="email"></form>
      <a id="out" href="https://example.org/?ref=shop">Elsewhere</a>
      <script>document.addEventListener('click', (e) => e.target.id === 'out' && e.preventDefault())</script>`;
    const tab = await chrome.browser.newPage();
    await tab.goto(`${frontBase}/shop/?utm_source=newsletter`);
    await until('the pageview answered', () => answers.length >= 1);
    await tab.click('#add');
    await tab.focus('#email');
    await tab.click('#out');
    await tab.evaluate("cairn('goal', 'Signup')");
    await hide(tab);
    await until('every event answered', () => answers.reduce((n, a) => n + a.sent, 0) >= 7);
    await tab.close();

    expect(answers.length).toBeGreaterThanOrEqual(2);
    for (const a of answers) {
      expect(a.status).toBe(202);
      expect(a.body).toEqual({ accepted: a.sent, dropped: 0 });
    }
    await analyticsOf(ctx.app.database.db).collector!.flush();
    const stored = await storedEvents(ctx.app, s.siteId);
    expect(stored.map((e) => e.type).sort()).toEqual(['click', 'click', 'engagement', 'form_start', 'goal', 'outbound', 'pageview']);
    expect(new Set(stored.map((e) => e.path))).toEqual(new Set(['/shop']));
    expect(stored.find((e) => e.type === 'outbound').target).toBe('https://example.org/?ref=shop');
    expect(stored.find((e) => e.type === 'goal').target).toBe('Signup');
  });
});
