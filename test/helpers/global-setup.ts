import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';

const PREFIX = 'rbtest_';
/** Leftovers of an interrupted run older than this are dropped when a run starts. */
const STALE_MS = 2 * 60 * 60 * 1000;

/**
 * Each run names its PostgreSQL schemas `rbtest_<run>_<random>`, `<run>` being its start time in
 * base 36 (handed to the test files in REELBASE_TEST_RUN), so that runs sharing a database (a
 * developer's and CI's) never drop each other's schemas: a run drops its own when it ends, and the
 * stale ones of interrupted runs when it starts.
 */
async function dropSchemas(keep: (run: string) => boolean): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(`select nspname from pg_namespace where nspname like $1`, [`${PREFIX.replace(/_/g, '\\_')}%`]);
    for (const { nspname } of rows) {
      const run = nspname.slice(PREFIX.length).split('_')[0];
      if (!keep(run)) await client.query(`drop schema if exists "${nspname}" cascade`);
    }
  } finally {
    await client.end();
  }
}

let run = '';

export async function setup(): Promise<void> {
  // The bundles (server, CLI) and the dashboard's assets as the sources are now: npm ci built them
  // once, and an edit since must show in the tests that run them as a user does (npm start, the CLI).
  execFileSync(process.execPath, [path.join(import.meta.dirname, '..', '..', 'scripts', 'build.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
  run = Date.now().toString(36);
  process.env.REELBASE_TEST_RUN = run;
  // Another run's schemas are kept unless they are stale (a run name that is not a time is an old layout: stale).
  await dropSchemas((other) => {
    const started = Number.parseInt(other, 36);
    return /^[0-9a-z]{8,9}$/.test(other) && Date.now() - started < STALE_MS;
  });
}

export async function teardown(): Promise<void> {
  await dropSchemas((other) => other !== run);
}
