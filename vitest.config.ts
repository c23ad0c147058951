import { defineConfig } from 'vitest/config';

/** Tests whose figure is a timing under real load (a live stream played in Chromium): run after the rest, alone. */
const ALONE = ['test/live-glass.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    // Each integration file works in a PostgreSQL schema of its own, so files may run in parallel.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: ALONE } },
      // A later group: it starts once every file of the suite has finished.
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
  },
});
