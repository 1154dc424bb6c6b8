import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    // A real S3 server (radosgw) for the storage tests when none is given.
    globalSetup: ['test/setup/radosgw.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
