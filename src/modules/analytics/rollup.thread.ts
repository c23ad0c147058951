/**
 * The rollups' own thread (src/modules/analytics/rollup-thread.ts starts it): a second connection to
 * the SQLite file, on which the batches are read and added without holding the server's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../db/database.ts';
import { RollupRepository } from './rollup.repository.ts';
import { RollupService } from './rollup.service.ts';
import type { RollupThreadData, ToRollupThread, FromRollupThread } from './rollup-thread.ts';

const data = workerData as RollupThreadData;
const database = openDatabase({ sqlitePath: data.file, memoryMap: false });
// No rest between batches: this thread serves no request. Its writes are short (the reading of a
// batch is outside its transaction), so the server's writes wait at most that long for the lock.
const rollups = new RollupService(
  database.db,
  { intervalSeconds: data.intervalSeconds, batchSize: data.batchSize, rest: false },
  new RollupRepository(database.db),
);
const running = new Map<number, { abort: AbortController; done: Promise<unknown> }>();
const port = parentPort!;
port.postMessage({ type: 'ready' } satisfies FromRollupThread);

port.on('message', (message: ToRollupThread) => {
  if (message.type === 'abort') return running.get(message.id)?.abort.abort();
  if (message.type === 'close') {
    // Runs end between batches once aborted; the connection closes after them.
    for (const run of running.values()) run.abort.abort();
    void Promise.allSettled([...running.values()].map((run) => run.done))
      .then(() => database.destroy())
      .finally(() => port.postMessage({ type: 'closed' } satisfies FromRollupThread));
    return;
  }
  const abort = new AbortController();
  const done = rollups
    .catchUp(abort.signal)
    .then(
      (result) => port.postMessage({ type: 'done', id: message.id, result } satisfies FromRollupThread),
      (err: unknown) =>
        port.postMessage({ type: 'failed', id: message.id, message: err instanceof Error ? err.message : String(err) } satisfies FromRollupThread),
    )
    .finally(() => running.delete(message.id));
  running.set(message.id, { abort, done });
});
