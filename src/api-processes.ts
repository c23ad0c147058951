import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.ts';

/**
 * API_PROCESSES > 1: this process only supervises; that many processes of the server share PORT
 * through node:cluster. Each is sent the one listening socket and accepts from it itself, through
 * handles of its own (src/net/accept-handles.ts), rather than being handed each connection by this
 * process, one message and its acknowledgement at a time: whichever process is free takes the next
 * connection. One Node process serves HTTP on one core; a machine's others then serve too
 * (docs/performance.md).
 *
 * The first process does all that ROLE says (migrations, the owner's first token, the RTMP ingest,
 * jobs); the others start once it serves, as `ROLE=api` without the ingest (its port is still the
 * configured one in the URLs they answer), so that nothing is created twice. A process that dies
 * after it served is started again; one that dies before (a migration that failed, a database out of
 * reach) ends them all with its exit code, since another start would fail the same way.
 */
const INDEX = 'REELBASE_API_PROCESS';
const RESTART_DELAY_MS = 1000;
const READY = 'reelbase: api process ready';

/** This process's place among the API processes: null when it is not one of them. */
export function apiProcessIndex(env: Record<string, string | undefined> = process.env): number | null {
  return cluster.isWorker && env[INDEX] !== undefined ? Number(env[INDEX]) : null;
}

/** The configuration process `index` runs with: the first as configured, the others API only. */
export function configOfApiProcess(config: Config, index: number): Config {
  return index === 0 ? config : { ...config, role: 'api' };
}

/** Whether the process at `index` makes what a first start makes and runs the RTMP ingest: the first API process, or a process alone. */
export function runsOnce(index: number | null): boolean {
  return index === null || index === 0;
}

/** Whether this process supervises API processes rather than serving (see above). */
export function supervisesApiProcesses(config: Config): boolean {
  return cluster.isPrimary && config.apiProcesses > 1 && config.role !== 'worker';
}

/** Said by an API process (at `index`) once it answers requests (and, for the first, once its first start's work is done). */
export function tellSupervisorReady(index: number | null): void {
  if (index !== null) process.send?.(READY);
}

export function superviseApiProcesses(count: number, log: (line: string) => void): void {
  // The processes accept from the socket themselves (see above).
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const workers = new Set<Worker>();
  let othersStarted = false;
  let stopping = false;
  let exitCode = 0;

  const start = (index: number) => {
    if (stopping) return;
    const worker = cluster.fork({ [INDEX]: String(index) });
    workers.add(worker);
    let served = false;
    worker.on('message', (message: unknown) => {
      if (message !== READY || served) return;
      served = true;
      // The first process has migrated and made what a first start makes: the others may come.
      if (index === 0 && !othersStarted && !stopping) {
        othersStarted = true;
        for (let i = 1; i < count; i++) start(i);
      }
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      const how = signal ?? `exit code ${code}`;
      // A Ctrl-C reaches every process of the terminal's group, this one's signal handler perhaps later.
      if (!stopping && signal === 'SIGINT') stop(0);
      if (stopping) {
        if (code) exitCode ||= code;
        if (workers.size === 0) process.exit(exitCode);
        return;
      }
      if (!served) {
        log(`reelbase: API process ${index + 1} of ${count} stopped before it served (${how}); stopping`);
        stop(code || 1);
        return;
      }
      log(`reelbase: API process ${index + 1} of ${count} stopped (${how}); starting it again`);
      setTimeout(() => start(index), RESTART_DELAY_MS);
    });
  };

  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    if (workers.size === 0) process.exit(code);
    // Each process drains its requests and jobs as on its own (src/shutdown.ts); then this one exits.
    for (const worker of workers) worker.process.kill('SIGTERM');
  };

  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  start(0);
}
