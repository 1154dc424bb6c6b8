import { richTextFromInput } from '../src/shared/richtext/index.js';
const block = '## Section\n\nSome *emphasis*.\n\n';
for (const n of [2500, 5000, 10000, 20000]) {
  const t = performance.now();
  richTextFromInput({ bodyMarkdown: block.repeat(n) });
  console.log(n, (performance.now() - t).toFixed(0), 'ms');
}
