import BetterSqlite3 from 'better-sqlite3';
// @ts-ignore
import { createBareApp } from '../bench/bare-fastify.mjs';
const probe = new BetterSqlite3(':memory:');
const proto = Object.getPrototypeOf(probe.prepare('select 1')) as any;
const times = new Map<string, number>();
for (const m of ['all', 'get']) {
  const orig = proto[m];
  proto[m] = function (this: any, ...args: unknown[]) { const t = performance.now(); const r = orig.apply(this, args); const k = this.source.slice(0, 150); times.set(k, (times.get(k) ?? 0) + performance.now() - t); return r; };
}
const app = createBareApp('/tmp/benchdb/cairn.db');
await app.ready();
for (let i = 0; i < 50; i++) await app.inject({ method: 'GET', url: '/v1/site-blocks/by-path?path=/' });
times.clear();
for (let i = 0; i < 300; i++) await app.inject({ method: 'GET', url: '/v1/site-blocks/by-path?path=/' });
for (const [k, v] of [...times.entries()].sort((a, b) => b[1] - a[1])) console.log((v / 300).toFixed(3), 'ms', k);
await app.close();
