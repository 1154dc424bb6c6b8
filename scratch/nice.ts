import { readFileSync, readdirSync } from 'node:fs';
import { renderRichText } from '../src/shared/richtext/render-pool.js';
const block = '## Section\n\nSome *emphasis*.\n\n';
const p = renderRichText({ bodyMarkdown: block.repeat(40000) });
await new Promise((r) => setTimeout(r, 1500));
for (const t of readdirSync('/proc/self/task')) {
  const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ');
  console.log(t, readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(), 'nice', stat[16]);
}
await p;
