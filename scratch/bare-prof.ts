// @ts-ignore
import { createBareApp } from '../bench/bare-fastify.mjs';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
const app = createBareApp('/tmp/benchdb/cairn.db');
await app.ready();
for (let i = 0; i < 50; i++) await app.inject({ method: 'GET', url: '/v1/site-blocks/by-path?path=/' });
const s = new Session(); s.connect();
await s.post('Profiler.enable'); await s.post('Profiler.start');
for (let i = 0; i < 300; i++) await app.inject({ method: 'GET', url: '/v1/site-blocks/by-path?path=/' });
const { profile } = await s.post('Profiler.stop');
const self = new Map<string, number>();
const dt = profile.timeDeltas!; const samples = profile.samples!;
const byId = new Map(profile.nodes.map((n: any) => [n.id, n]));
samples.forEach((id: number, i: number) => { const n: any = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); });
console.log([...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${(v / 1000).toFixed(1)}ms ${k}`).join('\n'));
await app.close();
