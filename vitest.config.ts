import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    environment: 'node',
    // Starts a private NATS on 127.0.0.1:4222 for the run when none answers there.
    globalSetup: ['test/support/shared-nats-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // e2e suites spawn real server processes; two cores are shared, so keep the pool small.
    maxWorkers: 2,
  },
});
