// npm links the bins of dependencies, never the project's own: link `cairn` into
// node_modules/.bin so that `npx cairn ...` works in the checkout (issue 2, item 3).
import fs from 'node:fs';
import path from 'node:path';

const binDir = path.resolve('node_modules/.bin');
const link = path.join(binDir, 'cairn');
fs.mkdirSync(binDir, { recursive: true });
fs.rmSync(link, { force: true });
fs.symlinkSync(path.relative(binDir, path.resolve('bin/cairn.js')), link);
