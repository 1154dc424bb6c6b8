import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    // One process per worker for every file: modules load once and the compiled serializers are
    // reused (plugins/serialization.ts). Each file still builds its own app on a fresh database.
    isolate: false,
    // A real S3 server (radosgw) for the storage tests when none is given.
    globalSetup: ['test/setup/radosgw.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
