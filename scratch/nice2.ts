import { renderRichText } from '../src/shared/richtext/render-pool.js';
const block = '## Section\n\nSome *emphasis*.\n\n';
const t = performance.now();
const keep = setInterval(() => console.log('waiting', ((performance.now() - t) / 1000).toFixed(1)), 2000);
const r = await renderRichText({ bodyMarkdown: block.repeat(4000) });
console.log('done', ((performance.now() - t) / 1000).toFixed(1), r?.ok);
const r2 = await renderRichText({ bodyMarkdown: block.repeat(4000) });
console.log('done2', ((performance.now() - t) / 1000).toFixed(1), r2?.ok);
clearInterval(keep);
