import { isDatabaseBusy } from '../lib/errors.ts';
import type { CompiledQuery, DatabaseConnection, Dialect, QueryResult, TransactionSettings } from 'kysely';
import { withDriver, WrappingDriver } from './driver-wrapper.ts';

/**
 * SQLite has one write lock per file. Another process (API_PROCESSES, the CLI, a worker) or thread
 * (the analytics rollups) holding it makes a write fail with SQLITE_BUSY, and SQLite's own busy
 * timeout waits by sleeping in the calling thread: on the server's, that is the event loop, which
 * then answers nothing, and its sleeps grow (1, 2, 5, 10 … 100 ms) while the other writer keeps the
 * lock busy; a holder on the same event loop could not even let go until the timeout (5 s, then a
 * 500; test/write-lock-wait.test.ts). So connections are opened with a busy timeout of 0, and a
 * statement that finds the lock taken is tried again after an asynchronous wait, while the event loop
 * goes on with everything else.
 *
 * Only where a failure changed nothing: a statement outside a transaction (it ran as one of its own),
 * or the `BEGIN IMMEDIATE` that starts one. Inside a transaction the write lock is already held
 * (transactions begin with it, src/db/sqlite-connection.ts), so a statement there does not meet it.
 */
const FIRST_WAIT_MS = 1;
export const LONGEST_WAIT_MS = 16;
/** As long as the busy timeout waited before (database.ts); then the statement fails as it did. */
export const SQLITE_BUSY_GIVE_UP_MS = 5_000;

/**
 * Runs `attempt` until it does not fail with SQLITE_BUSY, waiting 1 ms, then twice as long each time
 * (at most 16 ms), for at most `giveUpMs`; then the last failure is thrown. `firstFailure`: a failure
 * the caller already met (the first wait comes before the next attempt).
 */
export async function retryWhileBusy<T>(attempt: () => Promise<T> | T, giveUpMs = SQLITE_BUSY_GIVE_UP_MS, firstFailure?: unknown): Promise<T> {
  const deadline = performance.now() + giveUpMs;
  let failure = firstFailure;
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
    if (failure !== undefined) {
      if (!isDatabaseBusy(failure) || performance.now() + wait > deadline) throw failure as Error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    try {
      return await attempt();
    } catch (error) {
      failure = error ?? new Error(String(error));
    }
  }
}

/** What the wrappers need to know of the connection: whether a transaction is open on it. */
export interface TransactionState {
  readonly inTransaction: boolean;
}

class WaitingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly state: TransactionState,
  ) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.state.inTransaction) return this.inner.executeQuery<R>(compiledQuery);
    // The first attempt as it was (SQLite's connection fails at once, synchronously): no extra promise.
    try {
      return this.inner.executeQuery<R>(compiledQuery);
    } catch (error) {
      if (!isDatabaseBusy(error)) throw error;
      return retryWhileBusy(() => this.inner.executeQuery<R>(compiledQuery), SQLITE_BUSY_GIVE_UP_MS, error);
    }
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

/** Begins a transaction once the write lock is free (its `BEGIN IMMEDIATE` failed having changed nothing). */
class WaitingDriver extends WrappingDriver {
  override beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return retryWhileBusy(() => this.inner.beginTransaction(this.innerOf(c), settings));
  }
}

/**
 * `dialect` (SQLite's, over a connection whose busy timeout is 0) with a write that finds the file's
 * lock taken tried again after an asynchronous wait (above). `state`: the connection's, read before
 * each statement.
 */
export function waitingForTheWriteLock(dialect: Dialect, state: TransactionState): Dialect {
  return withDriver(dialect, (inner) => new WaitingDriver(inner, (connection) => new WaitingConnection(connection, state)));
}
