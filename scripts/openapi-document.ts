/**
 * Writes the service's OpenAPI document to a file (default clients/typescript/openapi.json), built
 * in process the way the tests build an app: SQLite in memory, no worker, a fixed public URL, so the
 * document depends on the code only and not on the machine it is generated on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const out = path.resolve(process.argv[2] ?? 'clients/typescript/openapi.json');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-openapi-'));
const config = loadConfig(
  { LOG_LEVEL: 'silent', PORT: '0', CAIRN_DATA_DIR: dataDir, PUBLIC_URL: 'http://localhost:3000' },
  { databaseUrl: ':memory:', worker: { enabled: false, pollMs: 100 }, secrets: { key: 'a'.repeat(64), previous: [] } },
);
const app = await createApp(config, { logger: false });
try {
  await app.ready();
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}`);
  fs.writeFileSync(out, `${JSON.stringify(res.json(), null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
