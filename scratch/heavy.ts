import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildTestApp, createSiteWithToken } from '../test/helpers/app.js';
import { client } from '../test/helpers/http.js';

const block = '## Section\n\nSome *emphasis*, a [link](https://example.com/page) and `code`.\n\n- one\n- two\n\n';
const md = block.repeat(Math.floor((950 * 1024) / block.length));
const ctx = await buildTestApp();
const s = await createSiteWithToken(ctx.app);
const api = client(ctx.app, s.token);
for (let i = 0; i < 4; i++) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const t = performance.now();
  const res = await api.post('/v1/contents', { type: 'post', title: `Heavy ${i}`, bodyMarkdown: md });
  const took = performance.now() - t;
  h.disable();
  console.log(res.status, 'took', took.toFixed(0), 'max stall', (h.max / 1e6).toFixed(0), 'ms', 'resp bytes', JSON.stringify(res.body).length);
}
await ctx.close();
