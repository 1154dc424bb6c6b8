import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The packages a freshly started app (SQLite, no Redis, no SMTP, local files) has loaded, in a
 * process of its own: those imported (recorded by module hooks) and those required.
 */
function loadedPackages(packages: readonly string[]): string[] {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-optional-'));
  const record = path.join(dataDir, 'loaded.txt');
  const script = `
    import { createRequire } from 'node:module';
    const { loadConfig } = await import('./src/config.ts');
    const { createApp } = await import('./src/app.ts');
    const config = loadConfig({ LOG_LEVEL: 'silent', CAIRN_DATA_DIR: ${JSON.stringify(dataDir)}, DATABASE_URL: ':memory:', CAIRN_SECRET_KEY: 'a'.repeat(64) });
    const app = await createApp(config, { logger: false });
    await app.ready();
    const { readFileSync } = await import('node:fs');
    const files = [...Object.keys(createRequire(import.meta.url).cache), ...readFileSync(${JSON.stringify(record)}, 'utf8').split('\\n')];
    const names = ${JSON.stringify(packages)};
    process.stdout.write(JSON.stringify(names.filter((n) => files.some((f) => f.includes('/node_modules/' + n + '/')))));
    await app.close();`;
  try {
    const run = spawnSync(process.execPath, ['--import', './test/fixtures/record-loads.mjs', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, RECORD_LOADS_FILE: record },
    });
    if (run.status !== 0) throw new Error(`the app did not start: ${run.stderr}`);
    return JSON.parse(run.stdout) as string[];
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('optional components (decisions P20)', () => {
  it('a SQLite server without Redis, SMTP, S3 or images loads none of their libraries', () => {
    // better-sqlite3 and fastify: the check sees what is loaded.
    expect(loadedPackages(['better-sqlite3', 'fastify', 'pg', 'ioredis', 'nodemailer', 'sharp', '@aws-sdk'])).toEqual(['better-sqlite3', 'fastify']);
  });
});
