import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { closeThread } from '../../lib/close-thread.ts';
import type { RollupResult, RollupRunner } from './rollup.service.ts';

export interface RollupThreadData {
  file: string;
  intervalSeconds: number;
  batchSize: number;
}
export type ToRollupThread = { type: 'catch-up'; id: number } | { type: 'abort'; id: number } | { type: 'close' };
export type FromRollupThread =
  { type: 'ready' } | { type: 'done'; id: number; result: RollupResult } | { type: 'failed'; id: number; message: string } | { type: 'closed' };

/**
 * Report ids per batch on the thread. Its transaction only writes what the batch adds (the batch is read
 * and its sketches merged before it), so it stays short whatever the size; and each of its commits
 * drops every cached read of the server (another connection's commit, which does not say what it
 * wrote), so fewer, larger batches.
 */
const THREAD_BATCH = 20_000;

/**
 * Where the thread's code is: beside the bundle (dist/rollup-thread.cjs, built by scripts/build.mjs),
 * or the TypeScript file, compiled by tsx's require hook (tests, benches, `node --import tsx`).
 */
function threadEntry(): { entry: string; tsx?: string } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.cjs')) return { entry: path.join(path.dirname(here), 'rollup-thread.cjs') };
  return { entry: fileURLToPath(new URL('./rollup.thread.ts', import.meta.url)), tsx: createRequire(import.meta.url).resolve('tsx/cjs/api') };
}

const BOOT = `
const { workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
require(workerData.entry);
`;

/**
 * The rollups of a SQLite file run on a thread of their own (docs/analytics.md, "Rollups"): on the
 * server's event loop, a batch of 1,000 reports held every request about 6 ms (read, then added), and a
 * run catching up 60,000 reports did so sixty times. The thread opens its own connection to the file;
 * its commits reach the server's read cache as another connection's, which drops every cached read,
 * once per batch.
 * Started for the first backlog of more than one batch (RollupService.catchUp), kept for the next
 * ones, closed with the app. It costs about 20 MB of memory (a V8 isolate and the modules it loads).
 */
export class RollupThread implements RollupRunner {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, { resolve(r: RollupResult): void; reject(e: Error): void }>();
  private nextId = 1;
  private closing: Promise<void> | null = null;
  /** A thread that failed before it was ready (its file missing, the database not opened): not started again. */
  private unavailable = false;

  constructor(private readonly data: Omit<RollupThreadData, 'batchSize'> & { batchSize?: number }) {}

  accepts(): boolean {
    return !this.closing && !this.unavailable;
  }

  catchUp(signal?: AbortSignal): Promise<RollupResult> {
    if (this.closing) return Promise.reject(new Error('analytics rollups: the thread is closed'));
    const worker = this.start();
    const id = this.nextId++;
    const onAbort = () => worker.postMessage({ type: 'abort', id } satisfies ToRollupThread);
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise<RollupResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ type: 'catch-up', id } satisfies ToRollupThread);
      if (signal?.aborted) onAbort();
    }).finally(() => signal?.removeEventListener('abort', onAbort));
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const data: RollupThreadData = { batchSize: THREAD_BATCH, ...this.data };
    const worker = new Worker(BOOT, { eval: true, workerData: { ...data, ...threadEntry() } });
    // A thread waiting for work must not keep the process alive.
    worker.unref();
    let ready = false;
    worker.on('message', (message: FromRollupThread) => {
      if (message.type === 'ready') return void (ready = true);
      if (message.type === 'closed') return;
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.type === 'done') waiter?.resolve(message.result);
      else waiter?.reject(new Error(`analytics rollups: ${message.message}`));
    });
    const fail = (err: Error) => {
      // The next run starts a new thread (the job is retried; progress moved with each batch), unless
      // this one never got ready: then the runs stay on the event loop, and this run's error is logged.
      if (this.worker === worker) this.worker = null;
      if (!ready) this.unavailable = true;
      for (const waiter of this.waiting.values()) waiter.reject(err);
      this.waiting.clear();
    };
    worker.on('error', (err) => fail(new Error(`analytics rollups: the thread failed: ${err.message || err.name || String(err)}`)));
    worker.on('exit', (code) => fail(new Error(`analytics rollups: the thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private async stop(): Promise<void> {
    const closed = (m: unknown) => (m as FromRollupThread).type === 'closed';
    if (this.worker) await closeThread(this.worker, { type: 'close' } satisfies ToRollupThread, closed, 5_000);
  }
}
