// @ts-ignore
import { createBareApp } from '../bench/bare-fastify.mjs';
const app = createBareApp('/tmp/benchdb/cairn.db');
await app.ready();
let res = await app.inject({ method: 'GET', url: '/v1/site-blocks/by-path?path=/' });
console.log(res.statusCode, res.body.length);
const t = performance.now();
for (let i = 0; i < 300; i++) res = await app.inject({ method: 'GET', url: '/v1/site-blocks/by-path?path=/' });
console.log(((performance.now() - t) / 300).toFixed(3), 'ms per request');
const body = JSON.parse(res.body);
const t2 = performance.now();
for (let i = 0; i < 300; i++) JSON.stringify(body);
console.log(((performance.now() - t2) / 300).toFixed(3), 'ms stringify');
await app.close();
