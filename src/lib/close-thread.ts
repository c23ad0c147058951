import type { Worker } from 'node:worker_threads';

/**
 * Closes a worker thread that holds a connection: sends it `message`, waits (at most `waitMs`) for the
 * message that says it closed it, or for its exit, then terminates it, waiting at most `waitMs` again:
 * a thread inside a statement cannot be interrupted (SQLite holds it), and it ends when the statement
 * returns, or with the process.
 */
export async function closeThread(worker: Worker, message: unknown, isClosed: (answer: unknown) => boolean, waitMs: number): Promise<void> {
  const waited = () => new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref());
  const closed = new Promise<void>((resolve) => {
    worker.on('message', (answer: unknown) => isClosed(answer) && resolve());
    worker.once('exit', () => resolve());
  });
  worker.postMessage(message);
  await Promise.race([closed, waited()]);
  await Promise.race([worker.terminate(), waited()]);
}
