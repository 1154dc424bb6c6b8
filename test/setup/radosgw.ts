import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A real S3 endpoint (credentials TESTAK / TESTSECRET) for the storage tests; null: none here. */
    s3Endpoint: string | null;
  }
}

/**
 * The S3 server the storage tests run against: S3_TEST_ENDPOINT when set (.ci/run starts one
 * radosgw for both runs), else a one-node Ceph radosgw started here when it is installed
 * (scripts/radosgw.sh, ~15 s) and stopped after the run. Without either, the S3 suites are skipped
 * and say so.
 */
export default function setup(project: TestProject) {
  const given = process.env.S3_TEST_ENDPOINT?.trim();
  if (given) {
    project.provide('s3Endpoint', given);
    return;
  }
  const installed = ['radosgw', 'ceph-mon', 'ceph-osd'].every((bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0);
  if (!installed) {
    if (process.env.CI === 'true') throw new Error('CI needs a real S3 server: install radosgw ceph-mon ceph-osd or set S3_TEST_ENDPOINT');
    console.warn('radosgw is not installed (apt-get install radosgw ceph-mon ceph-osd): the S3 storage tests are skipped');
    project.provide('s3Endpoint', null);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-radosgw-'));
  const script = path.resolve(import.meta.dirname, '../../scripts/radosgw.sh');
  // Ports of this run's own (below the ephemeral range, where outgoing connections take theirs), so two runs on one machine do not meet.
  const rgwPort = 20_000 + (process.pid % 10_000);
  const env = { ...process.env, RGW_PORT: String(rgwPort), MON_PORT: String(rgwPort - 10_000) };
  // The script bounds each of its three tries to about a minute and a half.
  execFileSync('bash', [script, 'start', dir], { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 330_000 });
  project.provide('s3Endpoint', `http://127.0.0.1:${rgwPort}`);
  return () => {
    execFileSync('bash', [script, 'stop', dir], { env, stdio: 'ignore' });
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
