import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { closeThread } from '../lib/close-thread.ts';

// A thread of its own (plain CommonJS, so that it runs the same from the bundle and under tsx): a
// second connection to the file that looks at the write-ahead log every EVERY_MS and copies it into
// the database once it holds `fromBytes`.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');
const fs = require('node:fs');
const wal = workerData.file + '-wal';
const timer = setInterval(() => {
  try {
    if (fs.statSync(wal).size < workerData.fromBytes) return;
    checkpoint.get();
  } catch {
    // Busy (the server's own checkpoint is running) or closing: the next pass catches up.
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.postMessage('closed');
});
`;

const EVERY_MS = 100;
/** Pages of the log (4 KiB each) from which this thread copies them: 16 MiB. */
export const CHECKPOINT_FROM_PAGES = 4_000;
/** The server's own automatic checkpoint, a bound for when this thread cannot finish a pass: 64 MiB. */
export const SERVER_CHECKPOINT_PAGES = 16_000;

/**
 * Checkpoints a SQLite file's write-ahead log off the event loop. SQLite checkpoints in the connection
 * that commits, once the log holds `wal_autocheckpoint` pages (1,000 by default): on the event loop,
 * copying the pages and syncing the log and the file held every request, many times a second under a
 * stream of viewers' reports. This thread copies the log once it holds CHECKPOINT_FROM_PAGES, with
 * PASSIVE checkpoints, which neither wait for nor block the server's readers and writer; the server's
 * own automatic checkpoint is raised to SERVER_CHECKPOINT_PAGES, a bound for a log this thread could
 * not finish (a writer that never pauses), and then finds most pages already copied.
 *
 * What is left on the event loop is one sync of the log's header when the server's next write starts
 * the log over. Measured with reports at 2,000/s (docs/analytics.md): their mean latency 6.0 → 2.5 ms.
 * A pass every 100 ms from the first page made it no better: the log started over so often that
 * those syncs cost what the checkpoints had.
 */
export class SqliteCheckpointer {
  private readonly worker: Worker;

  constructor(file: string, options: { fromPages?: number } = {}) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const workerData = { file, driver, everyMs: EVERY_MS, fromBytes: (options.fromPages ?? CHECKPOINT_FROM_PAGES) * 4096 };
    this.worker = new Worker(THREAD, { eval: true, workerData });
    this.worker.unref();
    // A thread that failed (the file gone, say) only leaves the checkpoints to the server's connection.
    this.worker.on('error', () => {});
  }

  stop(): Promise<void> {
    return closeThread(this.worker, 'stop', (answer) => answer === 'closed', 1_000);
  }
}
