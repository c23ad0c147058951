import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { sql, type Kysely } from 'kysely';
import { LONGEST_WAIT_MS } from './sqlite-busy.ts';

/** Gathers the query planner's statistics where they are missing or stale (the housekeeping sweep). */
export interface PlannerStatistics {
  refresh(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** PostgreSQL's autovacuum keeps its own: nothing to do. */
export const STATISTICS_KEPT_BY_THE_DATABASE: PlannerStatistics = { refresh: async () => {}, close: async () => {} };

// Plain CommonJS (as the other threads'), so that it runs the same from the bundle and under tsx: a
// connection of its own that analyzes the tables it is given one index at a time. Each ANALYZE is a
// transaction of its own, which holds the file's write lock while it reads the index: per index, not
// for every table at once. It may wait for the server's writes (a thread: it holds no event loop).
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const quoted = (name) => '"' + name.replace(/"/g, '""') + '"';
// Between two indexes the lock is let go for longer than a write that waited for it now waits between
// two tries (src/db/sqlite-busy.ts: about as long as it has waited, 16 ms at most); else the next
// ANALYZE took the lock back before it looked.
const rest = new Int32Array(new SharedArrayBuffer(4));
try {
  db.pragma('busy_timeout = 5000');
  db.pragma('analysis_limit = 0');
  const indexes = db.prepare('select name, partial from pragma_index_list(?)');
  const withoutRowid = db.prepare("select wr from pragma_table_list where schema = 'main' and name = ?").pluck();
  for (const table of workerData.tables) {
    const list = indexes.all(table);
    // Index by index where that gives what ANALYZE of the table gives. Not for a table without an
    // index (its one statistic is its row count), nor one whose indexes are all partial (that count
    // is written only by ANALYZE of the table), nor a WITHOUT ROWID table (its primary key's
    // statistics are filed under the table's name, which ANALYZE of the key's index does not clear:
    // a second gathering kept the old ones beside the new). Those are analyzed whole.
    const byIndex = list.some((index) => !index.partial) && !withoutRowid.get(table);
    for (const name of byIndex ? list.map((index) => index.name) : [table]) {
      const started = performance.now();
      db.exec('analyze "main".' + quoted(name));
      parentPort.postMessage({ analyzed: name, ms: performance.now() - started });
      Atomics.wait(rest, 0, 0, Math.min(workerData.restMs, performance.now() - started + 2));
    }
  }
} finally {
  db.close();
}
`;

const CLOSE_WAIT_MS = 2_000;
/** How often a connection looks for statistics another connection gathered (another process's sweep). */
export const FOLLOW_MS = 60_000;

/**
 * What `sqlite_stat1` holds, in one string: SQLite reads the statistics with the schema, which ANALYZE
 * does not change, so a connection finds another's new statistics by comparing this (a read of some
 * hundred rows) and reading them again when it moved. The read thread compares it too.
 */
export const STATISTICS_FINGERPRINT_SQL = "select group_concat(tbl || ' ' || coalesce(idx, '') || ' ' || stat, '|') from sqlite_stat1";
/** The thread's longest rest between two indexes: longer than a waiting write's longest pause. */
const REST_MS = LONGEST_WAIT_MS + 4;

/**
 * Tables that `PRAGMA optimize` would analyze (never analyzed, or grown or shrunk tenfold since),
 * asked of `db` without analyzing them (its debugging mode, 0x1; 0x10000: every table, not only those
 * this connection queried). It judges by the statistics `db` holds in memory.
 */
export async function staleTables(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<Record<string, unknown>>`pragma optimize = 0x10003`.execute(db);
  return rows.flatMap((row) => {
    const m = /^ANALYZE "main"\."((?:[^"]|"")+)"$/.exec(String(Object.values(row)[0]));
    return m ? [m[1].replace(/""/g, '"')] : [];
  });
}

/**
 * The stale tables, but for empty ones without an index: SQLite records nothing of those, so PRAGMA
 * optimize finds them stale at every look, and analyzing them would teach nothing. (An empty table
 * with an index is analyzed: that clears what it held before it was emptied.)
 */
export async function tablesToAnalyze(db: Kysely<any>): Promise<string[]> {
  const tables: string[] = [];
  for (const table of await staleTables(db)) {
    const { rows } = await sql`select 1 from ${sql.table(table)} limit 1`.execute(db);
    const indexed = await sql<{ n: number }>`select count(*) as n from pragma_index_list(${table})`.execute(db);
    if (rows.length > 0 || Number(indexed.rows[0].n) > 0) tables.push(table);
  }
  return tables;
}

/** Makes `sqlite_stat1` if it is missing: PRAGMA optimize analyzes nothing until it exists. */
async function withStatisticsTable(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from sqlite_schema where name = 'sqlite_stat1'`.execute(db);
  if (Number(rows[0].n) === 0) await sql`analyze sqlite_schema`.execute(db);
}

/**
 * Gathers the statistics of the stale tables on `db` itself, reading every entry of their indexes
 * (a sample of them misjudged a popular player: docs/analytics.md, "What the statistics cost"). For
 * databases in memory (tests) and the benches' seeds; a server's file goes through SqlitePlannerStatistics.
 */
export async function analyzeStaleTables(db: Kysely<any>): Promise<void> {
  await withStatisticsTable(db);
  await sql`pragma analysis_limit = 0`.execute(db);
  await sql`pragma optimize = 0x10002`.execute(db);
}

/**
 * SQLite's planner statistics, gathered off the event loop. SQLite plans without them from fixed
 * guesses, which pick the index with the most equal columns: an identified viewer's loads were joined
 * to a popular player's reports the wrong way round (minutes instead of milliseconds). Gathering them
 * reads every entry of a table's indexes, seconds at ten million reports; on the server's connection
 * that held the event loop, and the write lock, for all of it (docs/analytics.md, "What the statistics
 * cost"). Here the server's connection only asks which tables are stale (a look at their sizes,
 * which takes the write lock for an instant); a thread with a connection of its own analyzes them
 * index by index, with SQLite's own ANALYZE (the same `sqlite_stat1` and `sqlite_stat4` as ANALYZE of
 * the tables: test/sqlite-statistics.test.ts); then the server's connection reads them again
 * (`ANALYZE sqlite_schema`), and the read thread is told (`onGathered`). Other processes' connections
 * (API_PROCESSES, whose sweep runs in one of them) read them once they held still for a look, within
 * two FOLLOW_MS (`follow`), and tell their own read thread the same way.
 *
 * In memory (`file` null) there is no other connection: the tables are analyzed on `db`.
 */
export class SqlitePlannerStatistics implements PlannerStatistics {
  private running: Promise<void> | null = null;
  private worker: Worker | null = null;
  private closed = false;
  private following: NodeJS.Timeout | null = null;
  /** The statistics this connection last read (STATISTICS_FINGERPRINT_SQL); null before a first look. */
  private known: string | null = null;
  /** What another connection's gathering left at the last look, when that differed from `known`. */
  private moved: string | null = null;

  constructor(
    private readonly db: Kysely<any>,
    private readonly file: string | null,
    private readonly events: {
      /** Each index analyzed, and how long it held the write lock (the bench prints them). */
      onAnalyzed?: (index: string, ms: number) => void;
      /** This connection read new statistics, its own gathering's or another process's (the read thread then reads them at its next statement). */
      onGathered?: () => void;
    } = {},
  ) {}

  /** Looks every `everyMs` for statistics another connection gathered, and reads them when there are. */
  follow(everyMs = FOLLOW_MS): void {
    if (!this.file || this.following) return;
    void this.look();
    this.following = setInterval(() => void this.look(), everyMs).unref();
  }

  refresh(signal?: AbortSignal): Promise<void> {
    this.running ??= this.gather(signal).finally(() => (this.running = null));
    return this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.following) clearInterval(this.following);
    // An ANALYZE under way finishes its index (SQLite cannot be interrupted from here) and the thread
    // ends there; the tables left stay stale for the next sweep. Not waited for beyond CLOSE_WAIT_MS.
    if (this.worker) await Promise.race([this.worker.terminate(), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }

  private async gather(signal?: AbortSignal): Promise<void> {
    if (this.closed) return;
    if (!this.file) return analyzeStaleTables(this.db);
    await withStatisticsTable(this.db);
    const tables = await tablesToAnalyze(this.db);
    if (tables.length === 0 || signal?.aborted || this.closed) return;
    await this.analyzeOnThread(this.file, tables, signal);
    if (this.closed) return;
    await this.reread();
  }

  private async reread(): Promise<void> {
    await sql`analyze sqlite_schema`.execute(this.db);
    this.known = await this.fingerprint();
    this.moved = null;
    this.events.onGathered?.();
  }

  private async fingerprint(): Promise<string> {
    try {
      const { rows } = await sql<Record<string, string | null>>`${sql.raw(STATISTICS_FINGERPRINT_SQL)}`.execute(this.db);
      return String(Object.values(rows[0] ?? {})[0] ?? '');
    } catch {
      return ''; // no sqlite_stat1 yet
    }
  }

  private async look(): Promise<void> {
    if (this.closed || this.running) return;
    try {
      const now = await this.fingerprint();
      if (this.known === null || now === this.known) {
        this.known = now;
        this.moved = null;
      } else if (now !== this.moved) {
        // Moved since the last look: another connection may still be gathering, holding the write
        // lock for an index at a time, which reading them again (a write) would wait for with this
        // process's one connection, and its every statement behind it. Read once they hold still.
        this.moved = now;
      } else await this.reread();
    } catch {
      // The database closing, or its lock taken past the wait: the next look tries again.
    }
  }

  private analyzeOnThread(file: string, tables: string[], signal?: AbortSignal): Promise<void> {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(THREAD, { eval: true, workerData: { file, driver, tables, restMs: REST_MS } });
    this.worker = worker;
    // Kept referenced, as any statement awaited: the sweep waits for it. Closing the database (at
    // shutdown) or the sweep's abort ends it.
    const abort = () => void worker.terminate();
    signal?.addEventListener('abort', abort, { once: true });
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (m: { analyzed: string; ms: number }) => this.events.onAnalyzed?.(m.analyzed, m.ms));
      worker.once('error', (err) => reject(new Error(`gathering the planner's statistics failed: ${err.message}`)));
      worker.once('exit', () => resolve());
    }).finally(() => {
      signal?.removeEventListener('abort', abort);
      if (this.worker === worker) this.worker = null;
    });
  }
}
