// Builds the analytics tracker (design analytics.md 1.4): src/modules/analytics/tracker/*.ts,
// minified by esbuild into src/modules/analytics/public/, where the files are committed so an
// install needs no build step. `npm run build:tracker` writes them; the tracker's test builds
// again in memory and fails when the committed files differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = `${root}src/modules/analytics/tracker/`;
export const TRACKER_OUTPUT_DIR = `${root}src/modules/analytics/public/`;

const webVitals = JSON.parse(readFileSync(`${root}node_modules/web-vitals/package.json`, 'utf8')).version;
const banners = {
  'script.js': '/*! Cairn analytics tracker */',
  'cwv.js': `/*! Cairn Core Web Vitals; includes web-vitals ${webVitals} (c) Google LLC, Apache-2.0 */`,
};

/** The two files as built now: `{ 'script.js': text, 'cwv.js': text }`. */
export async function buildTracker() {
  const out = {};
  for (const [file, banner] of Object.entries(banners)) {
    const result = await build({
      entryPoints: [`${source}${file.replace(/\.js$/, '.ts')}`],
      bundle: true,
      minify: true,
      format: 'iife',
      target: 'es2017',
      platform: 'browser',
      legalComments: 'none',
      banner: { js: banner },
      write: false,
      logLevel: 'silent',
    });
    out[file] = result.outputFiles[0].text;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, text] of Object.entries(await buildTracker())) {
    writeFileSync(`${TRACKER_OUTPUT_DIR}${file}`, text);
    console.log(`${file}: ${Buffer.byteLength(text)} bytes`);
  }
}
