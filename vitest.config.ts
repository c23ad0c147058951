import { defineConfig } from 'vitest/config';

/**
 * Tests whose figures are timings in a real browser (the watch page's first frame and adaptation, a
 * live stream's glass-to-playback, the dashboard's pages): each runs after the rest, alone, one after the other. Beside
 * the suite's encodes and other browsers on two cores, the first frame took 1.7 s instead of 0.9 s.
 */
const ALONE = ['test/watch-browser.test.ts', 'test/live-glass.test.ts', 'test/dashboard-speed.test.ts'];

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
      // Later groups, one file each: a group starts once every file of the one before has finished.
      ...ALONE.map((file, i) => ({ extends: true as const, test: { name: `alone ${i + 1}`, include: [file], sequence: { groupOrder: i + 1 } } })),
    ],
  },
});
