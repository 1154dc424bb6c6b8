import BetterSqlite3 from 'better-sqlite3';
import { buildTestApp, createTokenFor, createSiteWithToken } from '../test/helpers/app.js';
import { client } from '../test/helpers/http.js';

const ctx = await buildTestApp();
const s = await createSiteWithToken(ctx.app);
const api = client(ctx.app, s.token);
const cat = (await api.post('/v1/categories', { name: 'News' })).body.data;
const tag = (await api.post('/v1/tags', { name: 'Red' })).body.data;
for (let i = 0; i < 12; i++) await api.post('/v1/contents', { type: 'post', title: `P${i}`, status: 'published', categoryIds: [cat.id], tagIds: [tag.id], bodyMarkdown: 'x' });
await api.post('/v1/site-blocks', { name: 'Home', type: 'page', path: '/', schema: [
  { name: 'title', type: 'string' },
  { name: 'latest', type: 'dataSource', source: 'contents', limit: 10 },
  { name: 'featured', type: 'dataSource', source: 'contents', filters: { categoryIds: [cat.id] }, limit: 10 },
  { name: 'tagged', type: 'dataSource', source: 'contents', filters: { tagIds: [tag.id] }, limit: 10 },
] });
await api.put('/v1/site-blocks/home/data', { data: { title: 'Welcome' } });
await api.post('/v1/site-blocks/home/publish');
const d = await createTokenFor(ctx.app, s.siteId, { kind: 'delivery', scopes: ['site_blocks.view'] });
const front = client(ctx.app, d.token);
await front.get('/v1/site-blocks/by-path?path=/');
const probe = new BetterSqlite3(':memory:');
const proto = Object.getPrototypeOf(probe.prepare('select 1')) as any;
const trace: string[] = [];
for (const m of ['all', 'get', 'run', 'iterate']) {
  const orig = proto[m];
  proto[m] = function (this: any, ...args: unknown[]) { trace.push(`${this.source.replace(/\s+/g, ' ')}  -- ${JSON.stringify(args).slice(0, 200)}`); return orig.apply(this, args); };
}
const res = await front.get('/v1/site-blocks/by-path?path=/');
console.log(res.status, res.text.length);
for (const t of trace) console.log(t, '\n');
console.log(JSON.stringify(res.body.data.data.latest[0], null, 1));
await ctx.close();
