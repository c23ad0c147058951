/**
 * The Reelbase API as the bench runs it: the real app (buildApp) with `npm start`'s runtime settings on
 * a fresh database, listening on a random port, request log off. Prints one JSON line {port, token} (an owner token of a new
 * organization) and serves until SIGTERM.
 *
 * Env: DATA_DIR (SQLite file under it), or DATABASE_URL + BENCH_PG_SCHEMA (a schema of its own).
 * BENCH_JOBS=1: the job runner too, as `npm start` runs it (the analytics bench waits for its rollups).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { ensureSigningSecret, tuneRuntime } from '../src/runtime.ts';
import { seedSize } from './seed-size.ts';
import { seedAnalytics } from './seed-analytics.ts';
import { watchServer } from './diagnostics.ts';

async function main() {
  // The same runtime settings as `npm start`.
  tuneRuntime();
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: '0' });
  fs.mkdirSync(config.dataDir, { recursive: true });
  ensureSigningSecret(config);
  const database = config.databaseUrl
    ? openDatabase({ url: config.databaseUrl, pgSchema: process.env.BENCH_PG_SCHEMA, poolSize: 10 })
    : openDatabase({ sqlitePath: path.join(config.dataDir, 'reelbase.sqlite'), backgroundCheckpoints: true });
  await migrateToLatest(database.db);
  const container = createContainer({ config, database });
  const { token } = await container.services.organizations.createWithOwner('Bench');
  // BENCH_ORGS=n: n - 1 more organizations, each with an owner token of its own (bench/mixed.ts).
  const tokens = [token];
  for (let i = 1; i < Number(process.env.BENCH_ORGS ?? 1); i++) tokens.push((await container.services.organizations.createWithOwner(`Bench ${i}`)).token);
  const app = await buildApp({ config, database, container });
  const runner = process.env.BENCH_JOBS
    ? new JobRunner(database.db, { handlers: jobHandlers(container), concurrency: config.workerConcurrency, leaseMs: config.jobLeaseMs })
    : null;
  if (runner) {
    await container.services.housekeeping.schedule();
    await container.services.analyticsRollups.schedule();
    runner.start();
  }
  // BENCH_SEED=size: the sizes of issue 15 (bench/size.ts) before the server listens.
  // BENCH_SEED=analytics: the stored reports of issue 16 (bench/analytics-size.ts).
  const seeded =
    process.env.BENCH_SEED === 'size'
      ? await seedSize(app, database, token)
      : process.env.BENCH_SEED === 'analytics'
        ? await seedAnalytics(app, database, token)
        : {};
  // BENCH_SLOW_MS=n: what the server itself sees on stderr (bench/diagnostics.ts).
  const slowMs = Number(process.env.BENCH_SLOW_MS ?? 0);
  if (slowMs > 0) watchServer(app.server, slowMs);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ port, token, tokens, pid: process.pid, ...seeded })}\n`);
  const stop = async () => {
    await runner?.stop(1_000);
    await app.close();
    await database.destroy();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
