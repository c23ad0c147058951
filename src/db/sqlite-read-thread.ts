import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import { closeThread } from '../lib/close-thread.ts';
import { STATISTICS_FINGERPRINT_SQL } from './sqlite-statistics.ts';
import type { DB } from './schema.ts';

// Plain CommonJS (as the checkpointer's thread), so that it runs the same from the bundle and under
// tsx: a read-only connection to the file that runs the statements it is sent.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
let statements;
let statistics;
let told = false;
// SQLite reads the planner's statistics (sqlite_stat1) with the schema, which ANALYZE does not change:
// a connection kept open would plan with those of its opening for ever. When told that new ones are
// in the file (SqlitePlannerStatistics gathered them, or read another process's), the thread looks
// before its next statement and opens the connection again if they differ from those it holds.
const statisticsOf = () => {
  try {
    return db.prepare(workerData.fingerprintSql).pluck().get() ?? '';
  } catch {
    return '';
  }
};
const open = () => {
  db = new Database(workerData.file, { readonly: true, fileMustExist: true });
  // As the server's connection (src/db/database.ts): reports are read by the hundred thousand.
  db.pragma('mmap_size = 268435456');
  db.pragma('cache_size = -65536');
  statements = new Map();
  statistics = statisticsOf();
};
open();
parentPort.postMessage({ ready: true });
parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    return parentPort.postMessage({ closed: true });
  }
  if (message.statisticsChanged) return void (told = true);
  try {
    if (told) {
      told = false;
      if (statisticsOf() !== statistics) {
        db.close();
        open();
      }
    }
    let statement = statements.get(message.sql);
    if (!statement) {
      statement = db.prepare(message.sql);
      if (!statement.reader) throw new Error('the read thread runs reads only');
      if (statements.size >= 200) statements.delete(statements.keys().next().value);
      statements.set(message.sql, statement);
    }
    const parameters = message.parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
    parentPort.postMessage({ id: message.id, rows: statement.all(...parameters) });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: String((err && err.message) || err) });
  }
});
`;

type FromThread = { ready: true } | { closed: true } | { id: number; rows: unknown[] } | { id: number; error: string };

interface Waiting {
  compiled: CompiledQuery;
  resolve(result: QueryResult<unknown>): void;
  reject(err: Error): void;
}

/**
 * Reads that may take long, run off the event loop: SQLite answers on the thread that asks, and a
 * report over a very popular player's reports (a million of them: about a second) held every request
 * of the server meanwhile (docs/analytics.md, "Reporting off the event loop"). This is a Kysely whose
 * statements run on a thread of their own, with a read-only connection to the same file; it sees
 * every commit made before a statement starts, as the server's connection does (WAL).
 *
 * Started at the first statement, closed with the database. A thread that cannot start (the file
 * gone, say) sends its statements, and every later one, to the server's own connection (`fallback`);
 * one that fails later fails the statements it held, and the next statement starts a new thread.
 * Reads only: the connection is opened read-only, and a transaction is refused.
 */
export class SqliteReadThread {
  readonly db: Kysely<DB>;
  private worker: Worker | null = null;
  private ready = false;
  private unavailable = false;
  private closing: Promise<void> | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly file: string,
    private readonly fallback: Kysely<DB>,
  ) {
    const driver = new ThreadDriver(this);
    this.db = new Kysely<DB>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => driver,
        createQueryCompiler: () => new SqliteQueryCompiler(),
        createIntrospector: (db) => new SqliteIntrospector(db),
      },
    });
  }

  /** Whether statements go to the thread (false once it could not start, or once closed). */
  get threaded(): boolean {
    return !this.unavailable && !this.closing;
  }

  execute(compiled: CompiledQuery): Promise<QueryResult<unknown>> {
    if (!this.threaded) return this.fallback.executeQuery(compiled);
    const worker = this.start();
    const id = this.nextId++;
    // The process lives while a statement is out; an idle thread does not keep it alive.
    if (this.waiting.size === 0) worker.ref();
    return new Promise<QueryResult<unknown>>((resolve, reject) => {
      this.waiting.set(id, { compiled, resolve, reject });
      try {
        worker.postMessage({ id, sql: compiled.sql, parameters: compiled.parameters });
      } catch (err) {
        // A parameter the thread cannot be sent: this statement's error.
        this.waiting.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    }).finally(() => {
      if (this.waiting.size === 0 && this.worker === worker) worker.unref();
    });
  }

  /** New planner statistics are in the file: the thread looks before its next statement. */
  statisticsChanged(): void {
    this.worker?.postMessage({ statisticsChanged: true });
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const workerData = {
      file: this.file,
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      fingerprintSql: STATISTICS_FINGERPRINT_SQL,
    };
    const worker = new Worker(THREAD, { eval: true, workerData });
    this.ready = false;
    worker.on('message', (message: FromThread) => {
      if ('ready' in message) return void (this.ready = true);
      if ('closed' in message) return;
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if ('error' in message) waiter?.reject(new Error(`a read off the event loop failed: ${message.error}`));
      else waiter?.resolve({ rows: message.rows });
    });
    const fail = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const held = [...this.waiting.values()];
      this.waiting.clear();
      if (!this.ready) {
        // Never opened its connection: the server's own answers, now and from now on.
        this.unavailable = true;
        for (const w of held) this.fallback.executeQuery(w.compiled).then(w.resolve, w.reject);
      } else for (const w of held) w.reject(err);
    };
    worker.on('error', (err) => fail(new Error(`the read thread failed: ${err.message || err.name || String(err)}`)));
    worker.on('exit', (code) => fail(new Error(`the read thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private async stop(): Promise<void> {
    if (this.worker) await closeThread(this.worker, { close: true }, (m) => typeof m === 'object' && m !== null && 'closed' in m, 2_000);
  }
}

class ThreadDriver implements Driver {
  private readonly connection: DatabaseConnection;

  constructor(private readonly thread: SqliteReadThread) {
    this.connection = {
      executeQuery: <R>(compiled: CompiledQuery) => thread.execute(compiled) as Promise<QueryResult<R>>,
      streamQuery: () => {
        throw new Error('the read thread does not stream');
      },
    };
  }

  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('the read thread runs single reads, not transactions');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    await this.thread.close();
  }
}
