import path from 'node:path';
import pino from 'pino';
import { apiProcessIndex, configOfApiProcess, runsOnce, superviseApiProcesses, supervisesApiProcesses, tellSupervisorReady } from './api-processes.ts';
import { buildApp, handlersIdle } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { ACCEPT_HANDLES, openAcceptHandles } from './net/accept-handles.ts';
import { JobRunner } from './jobs/runner.ts';
import { sweepWorkDirs } from './jobs/work-dir.ts';
import { describeTool } from './lib/ffmpeg-binaries.ts';
import { jobHandlers } from './modules/job-handlers.ts';
import { S3FileStore } from './media/s3-file-store.ts';
import { LiveIngest } from './modules/live/live-ingest.ts';
import { bootstrapOwner, openAndMigrate, tuneRuntime } from './runtime.ts';
import { jobGraceMs, Shutdown, shutdownTimeoutMs, watchNpmParent } from './shutdown.ts';
import { checkStartup, listenHoldingRequests, StartupError, toolsUsed } from './startup-checks.ts';

/** Entry point: ROLE=api serves HTTP, ROLE=worker runs jobs, ROLE=all (default) does both; API_PROCESSES > 1 supervises that many (src/api-processes.ts). */
/** START_TRACE=1: each phase of the start on stderr, in ms since the process began (docs/performance.md). */
const mark = process.env.START_TRACE === '1' ? (phase: string) => process.stderr.write(`start: ${phase} ${performance.now().toFixed(0)} ms\n`) : () => {};

async function main() {
  mark('code loaded');
  tuneRuntime();
  const index = apiProcessIndex();
  const config = index === null ? loadConfig() : configOfApiProcess(loadConfig(), index);
  mark('configuration');
  const timeoutMs = shutdownTimeoutMs();
  // The checks are the supervisor's when there is one: the port it checked is the API processes' to share.
  if (index === null) {
    // What can fail is checked before anything is created: one line saying what to change (src/startup-checks.ts).
    await checkStartup(config);
    // Which ffmpeg parses the uploads, and a warning when it is not a maintained release (src/lib/ffmpeg-binaries.ts).
    for (const [name, binary] of toolsUsed(config)) {
      const { line, warning } = describeTool(name, binary);
      process.stderr.write(`${line}\n${warning ? `${warning}\n` : ''}`);
    }
    mark('checks');
  }
  if (supervisesApiProcesses(config)) {
    superviseApiProcesses(config.apiProcesses, (line) => void process.stderr.write(`${line}\n`));
    watchNpmParent(() => process.kill(process.pid, 'SIGTERM'));
    return;
  }
  // Beside other API processes, a commit of another is seen by the very next read (src/db/change-clock.ts).
  const strictChanges = index === null ? undefined : { bellFile: path.join(config.dataDir, 'change-bell.sqlite') };
  const database = await openAndMigrate(config, { backgroundCheckpoints: true, strictChanges });
  mark('database');
  const container = createContainer({ config, database });
  // src/shutdown.ts: drain steps run together, then the release steps in order.
  const shutdown = new Shutdown({ timeoutMs });

  if (config.role !== 'worker') {
    const app = await buildApp({ config, database, container });
    mark('app');
    // Listening first: the owner is created only once the port is ours, and before any request is answered.
    const answerRequests = await listenHoldingRequests(app, config.host, config.port);
    const token = runsOnce(index) ? await bootstrapOwner(config, container.services.organizations) : null;
    if (token) {
      // Printed once, on the terminal that started the service; the request log never sees it.
      process.stdout.write(`\nReelbase created organization "Default".\nOwner token (also in ${config.dataDir}/owner-token): ${token}\n\n`);
    }
    answerRequests();
    mark('listening');
    // A burst of new connections is accepted 64 at a time, not one per turn, once a child has handed the handles over (src/net/accept-handles.ts); app.close() closes them too.
    void openAcceptHandles(app.server, ACCEPT_HANDLES);
    app.server.once('request', (_req, res) => res.once('finish', () => mark(`first response (${res.statusCode})`)));
    shutdown.drain('http', async () => {
      // close() stops accepting, closes idle keep-alive connections and waits for in-flight requests;
      // a connection whose request finishes meanwhile is idle from then on: closed as well, at once.
      const idle = setInterval(() => app.server.closeIdleConnections(), 50);
      try {
        await app.close();
      } finally {
        clearInterval(idle);
      }
      // Requests whose client went away are no longer the HTTP server's; their handlers may still run.
      await handlersIdle(app);
    });
    if (config.live.rtmpPort > 0 && runsOnce(index)) {
      // The RTMP ingest of live streams runs with the API (docs/live.md).
      const log = pino({ level: config.logLevel });
      const ingest = new LiveIngest(config, container.services.liveState, container.media, log);
      try {
        await ingest.start();
        shutdown.drain('rtmp ingest', () => ingest.stop());
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
    const runner = new JobRunner(database.db, { handlers: jobHandlers(container), concurrency: config.workerConcurrency, leaseMs: config.jobLeaseMs, log });
    // Scratch folders a dead worker left on this machine (docs/jobs.md).
    await sweepWorkDirs(container.media.workDir, (ids) => container.repositories.jobs.runningAmong(ids));
    // At most one housekeeping sweep is ever queued, whatever the number of workers (docs/jobs.md).
    await container.services.housekeeping.schedule();
    await container.services.analyticsRollups.schedule();
    runner.start();
    // Caption files written before they lived in the media store move there, in the background.
    void container.services.captions
      .storeLegacyFiles()
      .then((moved) => moved > 0 && log.info({ moved }, 'captions: files moved to the media store'))
      .catch((err: unknown) => log.warn({ err }, 'captions: moving legacy files to the media store failed; retried at the next start'));
    // Objects an earlier release wrote to S3 enter the object index, by one listing, once ever.
    if (container.media.store instanceof S3FileStore) {
      void container.media.store
        .indexExisting()
        .then((recorded) => recorded > 0 && log.info({ recorded }, 'media: objects of the store recorded in its index'))
        .catch((err: unknown) => log.warn({ err }, 'media: recording the objects of the store failed; retried at the next start'));
    }
    // Running jobs get most of the shutdown time to finish; then they are aborted and their leases released.
    shutdown.drain('jobs', () => runner.stop(jobGraceMs(timeoutMs)));
  }

  shutdown.release('mailer', () => container.mailer.close());
  // Its own connection closes before the server's (a worker process has no app whose close would).
  shutdown.release('analytics rollups', () => container.services.analyticsRollups.close());
  shutdown.release('database', () => database.destroy());
  process.on('SIGINT', () => void shutdown.stop('SIGINT'));
  process.on('SIGTERM', () => void shutdown.stop('SIGTERM'));
  watchNpmParent(() => void shutdown.stop('npm, its parent process, exited'));
  tellSupervisorReady(index);
}

main().catch((err) => {
  // Expected failures are their one sentence; anything else keeps its stack.
  console.error(err instanceof ConfigError || err instanceof StartupError ? err.message : err);
  process.exit(1);
});
