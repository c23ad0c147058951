import pino from 'pino';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { JobRunner } from './jobs/runner.ts';
import { jobHandlers } from './modules/job-handlers.ts';
import { LiveIngest } from './modules/live/live-ingest.ts';
import { bootstrapOwner, openAndMigrate, tuneRuntime } from './runtime.ts';

/** Entry point: ROLE=api serves HTTP, ROLE=worker runs jobs, ROLE=all (default) does both. */
async function main() {
  tuneRuntime();
  const config = loadConfig();
  const database = await openAndMigrate(config);
  const container = createContainer({ config, database });
  const closers: Array<() => Promise<void>> = [() => container.mailer.close()];

  if (config.role !== 'worker') {
    const token = await bootstrapOwner(config, container.services.organizations);
    if (token) {
      // Printed once, on the terminal that started the service; the request log never sees it.
      process.stdout.write(`\nReelbase created organization "Default".\nOwner token (also in ${config.dataDir}/owner-token): ${token}\n\n`);
    }
    const app = await buildApp({ config, database, container });
    await app.listen({ host: config.host, port: config.port });
    closers.push(() => app.close());
    if (config.live.rtmpPort > 0) {
      // The RTMP ingest of live streams runs with the API (docs/live.md); closed first on shutdown.
      const log = pino({ level: config.logLevel });
      const ingest = new LiveIngest(config, container.services.liveState, log);
      try {
        await ingest.start();
        closers.unshift(() => ingest.stop());
      } catch (err) {
        // A second instance on one machine must still serve its API: only live ingest is unavailable.
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        log.warn({ port: config.live.rtmpPort }, 'live: RTMP port in use, ingest disabled in this process (set RTMP_PORT)');
        await ingest.stop().catch(() => {});
      }
    }
  }

  if (config.role !== 'api') {
    const log = pino({ level: config.logLevel });
    const runner = new JobRunner(database.db, { handlers: jobHandlers(container), concurrency: config.workerConcurrency, log });
    runner.start();
    closers.unshift(() => runner.stop());
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`reelbase: ${signal}, shutting down\n`);
    for (const close of closers) await close();
    await database.destroy();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
