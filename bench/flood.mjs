// The noisy tenant of the noisy-neighbour rows (bench/noisy-neighbour.ts), in a process of its
// own: a flood of 9 MB answers parsed on the measuring process's event loop would delay the
// neighbour's measured reads there, not in the server. Reads the autocannon options as JSON from
// the file its first argument names (a 1 MB body is too large for the environment), runs them,
// and prints the totals as one JSON line.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const options = process.argv[2] ? JSON.parse(readFileSync(process.argv[2], 'utf8')) : null;
if (!options?.url) {
  process.stderr.write('flood: the file named by the first argument must hold autocannon options with a url\n');
  process.exit(1);
}
const result = await autocannon(options);
process.stdout.write(`${JSON.stringify({ total: result.requests.total, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts })}\n`);
