// Summarises a V8 CPU profile of the server under load (`BENCH_PROFILE_DIR=... npm run bench`
// writes one): where a request's CPU goes, step by step (issue 37). Only samples after the first
// one inside `marker` (a function every measured request runs; default `rateLimit`) count, so
// start-up and seeding are left out. Prints each step's share of the busy samples and, given
// the bench row's CPU ms per request, its CPU ms per request. Given a reference's CPU ms per
// request from the same run (`--reference <ms>`: the lean server, or bare node:http sending the
// same bytes), it also prints the ratio the row would reach if the pipeline (the steps of
// PIPELINE) cost nothing: the ceiling of what cutting the pipeline can give (decisions PF24).
//
//   node bench/profile-summary.mjs <file.cpuprofile> [cpuMsPerRequest] [marker] [--reference <ms>]
//
// Steps are matched by function name anywhere on the stack, innermost step first; the shares of
// a wall-clock sampler on a busy machine include time the kernel spent in system calls
// (writev), so read them as proportions, and take the totals from the bench's /proc figures.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const referenceAt = args.indexOf('--reference');
const referenceMs = referenceAt === -1 ? null : Number(args.splice(referenceAt, 2)[1]);
const [file, cpuMsArg, marker = 'rateLimit'] = args;
if (!file || (referenceMs !== null && !(referenceMs > 0 && cpuMsArg))) {
  process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile> [cpuMsPerRequest] [marker] [--reference <ms>]\n');
  process.exit(1);
}
/** [step, function names that belong to it]; the first step found walking up from the leaf wins. */
const STEPS = [
  // (applyRateLimit, keyGenerator: @fastify/rate-limit and its key function, before issue 37)
  ['rate limit', ['rateLimit', 'rateLimitUnknownRoute', 'applyRateLimit', 'keyGenerator']],
  ['authentication', ['authenticate', 'identifySite']],
  ['delivery cache lookup', ['deliveryCacheLookup']],
  ['delivery cache store', ['deliveryCacheStore']],
  ['validation', ['preValidationCallback', 'validate']],
  ['serialisation', ['serialize', 'serializeReply']],
  ['other onSend hooks', ['onSendHookRunner']],
  ['logging', ['createChildLogger', 'onResFinished']],
  ['database (Kysely and the driver)', ['executeQuery', 'provideConnection', 'acquireConnection', 'compileQuery', 'executeTakeFirst', 'execute']],
  ['route handler (rules, building the query)', ['preHandlerCallbackInner']],
  ['writing the response', ['writePayload', 'onSendEnd', 'writev']],
  ['routing and hook machinery', ['routeHandler', 'lookup', 'hookRunner']],
  ['HTTP parsing (node:http)', ['parserOnHeadersComplete', 'parserOnIncoming', 'onParserExecute']],
  ['garbage collection', ['(garbage collector)']],
];
/** What every request pays around its own work: authentication, limits, hooks, logging, validation. */
const PIPELINE = new Set([
  'rate limit',
  'authentication',
  'delivery cache lookup',
  'delivery cache store',
  'validation',
  'other onSend hooks',
  'logging',
  'routing and hook machinery',
]);

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stackOf = (id) => {
  const names = [];
  for (let n = id; n !== undefined; n = parent.get(n)) names.push(nodes.get(n).callFrame.functionName);
  return names;
};

let t = profile.startTime;
let from = null;
const shares = new Map();
/** Leaf functions of the samples no step claimed, to name a step that is missing. */
const unclaimed = new Map();
let busy = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  const stack = stackOf(profile.samples[i]);
  if (from === null) {
    if (stack.includes(marker)) from = t;
    continue;
  }
  if (stack[0] === '(idle)' || stack[0] === '(program)') continue;
  const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i];
  busy += dt;
  let step = 'other';
  for (const name of stack) {
    const found = STEPS.find(([, names]) => names.includes(name));
    if (found) {
      step = found[0];
      break;
    }
  }
  shares.set(step, (shares.get(step) ?? 0) + dt);
  if (step === 'other') unclaimed.set(stack[0], (unclaimed.get(stack[0]) ?? 0) + dt);
}
if (from === null) {
  process.stderr.write(`no sample inside ${marker}: was the server profiled under load?\n`);
  process.exit(1);
}
const cpuMs = cpuMsArg ? Number(cpuMsArg) : null;
process.stdout.write(`busy samples: ${(busy / 1000).toFixed(0)} ms\n| step | share | CPU ms/req |\n| --- | ---: | ---: |\n`);
for (const [step, us] of [...shares].sort((a, b) => b[1] - a[1])) {
  const share = us / busy;
  process.stdout.write(`| ${step} | ${(100 * share).toFixed(1)}% | ${cpuMs === null ? '' : (share * cpuMs).toFixed(4)} |\n`);
}
const top = [...unclaimed].sort((a, b) => b[1] - a[1]).slice(0, 8);
process.stdout.write(`\nmost of "other": ${top.map(([name, us]) => `${name || '(anonymous)'} ${((100 * us) / busy).toFixed(1)}%`).join(', ')}\n`);
if (referenceMs !== null && cpuMs !== null) {
  let pipeline = 0;
  for (const [step, us] of shares) if (PIPELINE.has(step)) pipeline += us;
  const share = pipeline / busy;
  const without = cpuMs * (1 - share);
  process.stdout.write(
    `pipeline ${(100 * share).toFixed(1)}% (${(share * cpuMs).toFixed(4)} ms); ratio to the reference now ${(referenceMs / cpuMs).toFixed(2)}x, with a pipeline that cost nothing at most ${(referenceMs / without).toFixed(2)}x\n`,
  );
}
