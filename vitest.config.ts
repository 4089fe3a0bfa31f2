import { defineConfig } from 'vitest/config';

// Unit tests need nothing running and nothing built; the other suites use the shared NATS on
// 127.0.0.1:4222, which this global setup starts for the run when none answers there.
const withNats = ['test/support/shared-nats-setup.ts'];
// Its child processes run the built client library, so it needs `npm run build` like the e2e suites.
const needsBuiltClient = 'packages/client/test/unit/state-lock.test.ts';

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // e2e suites spawn real server processes; two cores are shared, so keep the pool small.
    maxWorkers: 2,
    // `npm test` runs every project; `npm run test:unit` (`--project unit`) only the first.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'packages/*/test/unit/**/*.test.ts', 'packages/*/test/cli/**/*.test.ts'],
          exclude: ['**/*.e2e.test.ts', needsBuiltClient],
        },
      },
      { extends: true, test: { name: 'contract', include: ['test/contract/**/*.test.ts'], globalSetup: withNats } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'packages/*/test/e2e/**/*.test.ts', 'packages/*/test/**/*.e2e.test.ts', needsBuiltClient],
          globalSetup: withNats,
        },
      },
      { extends: true, test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], globalSetup: withNats } },
    ],
  },
});
