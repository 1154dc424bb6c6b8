import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files that must stay slow: they start the built server, the CLI, rendering processes or a
 * browser, break connections, or fill thousands of rows through the API. `npm test` runs every
 * file but the fault tests (CI runs it on both databases); while working, `npm run test:fast`
 * leaves these out and `npm run test:slow` runs only them. The fault tests (test/faults: a dead or
 * stalled dependency, a lost connection, a lock; they wait out timeouts) run with
 * `npm run test:faults`, which CI runs on both databases too.
 */
const SLOW = [
  'test/platform/process.test.ts',
  'test/platform/optional-components.test.ts',
  'test/platform/query-plans.test.ts',
  'test/platform/sqlite-checkpoint.test.ts',
  'test/browser/**/*.test.ts',
  'src/shared/richtext/render-pool.test.ts',
  'src/modules/forms/forms.export.test.ts',
];
/**
 * Fault tests: test/faults wait out timeouts (a dead, stalled or cut dependency, a lock);
 * test/faults-slow take a process or the machine into a bad state for seconds (a stopped Redis,
 * a flood of connections, a full disk). `npm run test:faults` runs them, `npm test` does not.
 */
const FAULTS = ['test/faults/**/*.test.ts', 'test/faults-slow/**/*.test.ts'];
const only = process.env.CAIRN_TESTS as 'fast' | 'slow' | 'faults' | undefined;

export default defineConfig({
  test: {
    include: only === 'slow' ? SLOW : only === 'faults' ? FAULTS : ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(only === 'faults' ? [] : FAULTS), ...(only === 'fast' ? SLOW : [])],
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
