/**
 * `npm run soak`: the built server under a steady mixed load for SOAK_MINUTES (10), 90% reads
 * and 10% writes from SOAK_CONNECTIONS (8) loops, on a fresh SQLite file (or DATABASE_URL when it
 * names PostgreSQL). Every minute it prints the rate, the errors, p50/p99 of that minute, the
 * server's RSS and the size of the SQLite WAL; at the end, the totals and the start and end
 * figures. It fails (exit 1) on any 5xx or network error: a soak with errors is not a pass.
 *
 * Each loop works on its own contents, so no request races another's delete: any 4xx is
 * unexpected too and counted as an error.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort, rssMb, serverNodeFlags, startChild, stopChild, waitForHttp } from './children.js';
import { seedDatabase } from './seed.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 8);
const WRITE_SHARE = 0.1;
const WORDS = ['river', 'stone', 'mountain', 'cairn', 'trail', 'summit', 'valley', 'ridge', 'forest', 'lake'];

/** Latencies in 0.1 ms buckets up to 10 s (the last bucket holds everything slower). */
class Histogram {
  private readonly buckets = new Uint32Array(100_001);
  count = 0;
  add(ms: number) {
    this.buckets[Math.min(100_000, Math.round(ms * 10))]!++;
    this.count++;
  }
  quantile(q: number): number {
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i]!;
      if (seen >= rank && rank > 0) return i / 10;
    }
    return 0;
  }
}

interface Window {
  started: number;
  latency: Histogram;
  reads: number;
  writes: number;
  errors: number;
}
const newWindow = (): Window => ({ started: Date.now(), latency: new Histogram(), reads: 0, writes: 0, errors: 0 });

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const paragraph = () => Array.from({ length: 60 }, () => pick(WORDS)).join(' ');

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cairn-soak-'));
  const pg = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
  const databaseUrl = pg ? process.env.DATABASE_URL! : path.join(tmp, 'soak.db');
  const { ctx } = await seedDatabase(databaseUrl, []);
  const port = await freePort();
  const server = startChild(
    'cairn server',
    [...serverNodeFlags(ROOT), path.join(ROOT, 'dist/server.js')],
    {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      CAIRN_DATA_DIR: tmp,
      CAIRN_SECRET_KEY: randomBytes(32).toString('hex'),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '10000000',
      RATE_LIMIT_PUBLIC_MAX: '10000000',
    },
    ROOT,
  );
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${ctx.token}` };
  const withBody = { ...auth, 'content-type': 'application/json' };
  const failures: string[] = [];
  let window = newWindow();
  const total = { latency: new Histogram(), reads: 0, writes: 0, errors: 0 };

  async function call(method: string, url: string, body?: unknown, write = false): Promise<any> {
    const started = performance.now();
    let status = 0;
    let json: any = null;
    try {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: body === undefined ? auth : withBody,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      status = res.status;
      const text = await res.text();
      json = text ? JSON.parse(text) : null;
    } catch (err) {
      if (failures.length < 20) failures.push(`${method} ${url}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const ms = performance.now() - started;
    for (const w of [window, total]) {
      w.latency.add(ms);
      if (write) w.writes++;
      else w.reads++;
      if (status < 200 || status >= 400) w.errors++;
    }
    if (status >= 400 && failures.length < 20) failures.push(`${method} ${url}: ${status} ${JSON.stringify(json).slice(0, 200)}`);
    return json;
  }

  const walFile = `${databaseUrl}-wal`;
  const walMb = () => {
    if (pg) return null;
    try {
      return statSync(walFile).size / 1024 / 1024;
    } catch {
      return 0;
    }
  };
  const fmt = (v: number | null, digits = 1) => (v === null ? 'n/a' : v.toFixed(digits));

  try {
    await waitForHttp(server, `${base}/health`);
    // Starting content: 300 published posts, each loop's own 20 drafts, 30 tags.
    for (let i = 0; i < 30; i++) await call('POST', '/v1/tags', { name: `Tag ${i}` }, true);
    const published: number[] = [];
    for (let i = 0; i < 300; i++) {
      const c = await call(
        'POST',
        '/v1/contents',
        { type: 'post', title: `Post ${i} ${pick(WORDS)}`, status: 'published', bodyMarkdown: `# Post ${i}\n\n${paragraph()}` },
        true,
      );
      if (c?.data?.id) published.push(c.data.id);
    }
    const start = { rssMb: rssMb(server.pid), walMb: walMb(), at: new Date().toISOString() };
    window = newWindow();
    Object.assign(total, { latency: new Histogram(), reads: 0, writes: 0, errors: 0 });
    console.log(`soak: ${MINUTES} min, ${CONNECTIONS} loops, ${pg ? 'PostgreSQL' : 'SQLite'}; start RSS ${fmt(start.rssMb)} MB, WAL ${fmt(start.walMb, 2)} MB`);
    console.log('| minute | requests/s | errors | p50 ms | p99 ms | RSS MB | WAL MB |');
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');

    const deadline = Date.now() + MINUTES * 60_000;
    let minute = 0;
    const reporter = setInterval(() => {
      minute++;
      const w = window;
      window = newWindow();
      const secs = (Date.now() - w.started) / 1000;
      console.log(
        `| ${minute} | ${((w.reads + w.writes) / secs).toFixed(0)} | ${w.errors} | ${w.latency.quantile(0.5).toFixed(1)} | ${w.latency.quantile(0.99).toFixed(1)} | ${fmt(rssMb(server.pid))} | ${fmt(walMb(), 2)} |`,
      );
    }, 60_000);

    const loop = async (n: number) => {
      const own: number[] = [];
      while (Date.now() < deadline) {
        if (Math.random() < WRITE_SHARE) {
          const r = Math.random();
          if (own.length < 20 || r < 0.4) {
            const c = await call('POST', '/v1/contents', { type: 'post', title: `Loop ${n} ${pick(WORDS)} ${Date.now()}`, bodyMarkdown: paragraph() }, true);
            if (c?.data?.id) own.push(c.data.id);
          } else if (r < 0.8) {
            await call('PUT', `/v1/contents/${pick(own)}`, { title: `Loop ${n} edited ${Date.now()}`, bodyMarkdown: `${paragraph()}\n\n${paragraph()}` }, true);
          } else {
            const id = own.splice(Math.floor(Math.random() * own.length), 1)[0]!;
            await call('DELETE', `/v1/contents/${id}`, undefined, true);
          }
        } else {
          const r = Math.random();
          if (r < 0.35) await call('GET', `/v1/contents?limit=20&page=${1 + Math.floor(Math.random() * 10)}`);
          else if (r < 0.7) await call('GET', `/v1/contents/${pick(published)}`);
          else if (r < 0.85) await call('GET', `/v1/contents/search?q=${pick(WORDS)}&limit=10`);
          else await call('GET', '/v1/tags?limit=50');
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => loop(n)));
    clearInterval(reporter);

    const end = { rssMb: rssMb(server.pid), walMb: walMb(), at: new Date().toISOString() };
    const requests = total.reads + total.writes;
    const report = {
      minutes: MINUTES,
      connections: CONNECTIONS,
      database: pg ? 'postgresql' : 'sqlite',
      requests,
      requestsPerSecond: requests / (MINUTES * 60),
      reads: total.reads,
      writes: total.writes,
      errors: total.errors,
      errorRate: requests ? total.errors / requests : 0,
      p50Ms: total.latency.quantile(0.5),
      p99Ms: total.latency.quantile(0.99),
      start,
      end,
      failures,
    };
    console.log(
      `\nsoak: ${requests} requests (${report.requestsPerSecond.toFixed(0)}/s, ${total.writes} writes), ${total.errors} errors (${(report.errorRate * 100).toFixed(3)}%), p50 ${report.p50Ms.toFixed(1)} ms, p99 ${report.p99Ms.toFixed(1)} ms; RSS ${fmt(start.rssMb)} -> ${fmt(end.rssMb)} MB; WAL ${fmt(start.walMb, 2)} -> ${fmt(end.walMb, 2)} MB`,
    );
    if (failures.length) console.log(`first failures:\n  ${failures.join('\n  ')}`);
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    const file = path.join(ROOT, 'bench/results', `soak-${report.database}-${end.at.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written: ${path.relative(ROOT, file)}`);
    if (total.errors > 0) process.exitCode = 1;
  } finally {
    await stopChild(server);
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
