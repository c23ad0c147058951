import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import { pgDriver } from './pg-driver.ts';
import { Kysely, SqliteDialect, type Dialect } from 'kysely';
import { SchemaPostgresDialect } from './pg-schema-dialect.ts';
import type { DB } from './schema.ts';
import { ChangeBell } from './change-bell.ts';
import { PgChangeClock, SqliteChangeClock, type ChangeClock } from './change-clock.ts';
import { listenForChanges, wrapPgPool } from './pg-connection.ts';
import { attachReadCache, ReadCache } from './read-cache.ts';
import { SERVER_CHECKPOINT_PAGES, SqliteCheckpointer } from './sqlite-checkpointer.ts';
import { wrapSqlite } from './sqlite-connection.ts';
import { SqliteReadThread } from './sqlite-read-thread.ts';
import { SqlitePlannerStatistics, STATISTICS_KEPT_BY_THE_DATABASE, type PlannerStatistics } from './sqlite-statistics.ts';
import { waitingForTheWriteLock } from './sqlite-busy.ts';
import { ChangeCountReader } from './sqlite-change-counts.ts';
import { organizationBeingWritten, rowsBeingWritten, scopingWrites } from './write-scope.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  /** Moves whenever the database may have changed; the read cache follows it. */
  clock: ChangeClock;
  /** SQLite's file, when the database is one (not in memory): for threads that open their own connection. */
  file?: string;
  /**
   * For reads that may run long (reports over many stored rows), kept from what every request needs:
   * SQLite in a file runs them on a thread of its own (src/db/sqlite-read-thread.ts), so that they do
   * not hold the event loop; PostgreSQL on LONG_READ_CONNECTIONS connections of their own, so that
   * they do not hold the pool's; in memory (tests) this is `db`.
   */
  longReads: Kysely<DB>;
  /** The query planner's statistics, gathered where stale by the housekeeping sweep (src/db/sqlite-statistics.ts). */
  statistics: PlannerStatistics;
  destroy(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://… selects PostgreSQL; otherwise SQLite at sqlitePath. */
  url?: string;
  sqlitePath?: string;
  /** PostgreSQL schema (search_path) to use; tests give each file its own. */
  pgSchema?: string;
  poolSize?: number;
  /** SQLite in a file: checkpoint its write-ahead log on a thread of its own (the server; not the CLI). */
  backgroundCheckpoints?: boolean | { fromPages?: number };
  /** SQLite: read through a memory map (default true); a thread's second connection goes without, so as not to map the file twice. */
  memoryMap?: boolean;
  /**
   * Every read sees every commit that finished before it began, whichever process of this machine
   * made it: for processes that take turns serving one client (API_PROCESSES). SQLite then asks for
   * other connections' commits at every cached read; on PostgreSQL, whose notifications of them can
   * come after such a read, the processes ring each other through `bellFile` (src/db/change-bell.ts).
   */
  strictChanges?: { bellFile: string };
}

/** PostgreSQL's connections for long reads, beside the pool (`poolSize`). */
export const LONG_READ_CONNECTIONS = 2;

/**
 * An idle connection of a pool that PostgreSQL ended (a restart, a failover, an operator's
 * pg_terminate_backend) leaves the pool, which opens another when next needed. Without a listener for
 * the pool's `error`, Node ended the whole process.
 */
function replacedWhenNeeded(): void {}

function longReadPool(connection: pg.ClientConfig, schema: string | undefined): pg.Pool {
  // Named, so that an operator (or a test) can tell them from the pool's.
  const pool = new (pgDriver().Pool)({ ...connection, max: LONG_READ_CONNECTIONS, application_name: `reelbase reports${schema ? ` ${schema}` : ''}` });
  pool.on('error', replacedWhenNeeded);
  return pool;
}

export function openDatabase(options: DatabaseOptions): Database {
  if (options.url && /^postgres(ql)?:\/\//.test(options.url)) {
    // No JIT: it pays only for queries that run for seconds, and compiling took longer than running
    // the short queries it chose (a rollup batch: 300 ms instead of 40, docs/analytics.md).
    // Beside the options of the URL or of PGOPTIONS (e.g. a search_path), which `options` here would replace.
    const inherited = new URL(options.url).searchParams.get('options') ?? process.env.PGOPTIONS;
    const settings = [...(inherited ? [inherited] : []), '-c jit=off', ...(options.pgSchema ? [`-c search_path=${options.pgSchema}`] : [])];
    const connection: pg.ClientConfig = { connectionString: options.url, options: settings.join(' ') };
    const pool = new (pgDriver().Pool)({ ...connection, max: options.poolSize ?? 10 });
    pool.on('error', replacedWhenNeeded);
    const clock = new PgChangeClock(options.strictChanges ? new ChangeBell(options.strictChanges.bellFile) : undefined);
    const own = new Set<number>();
    const db = new Kysely<DB>({
      dialect: scopingWrites(
        new SchemaPostgresDialect({
          pool: wrapPgPool(pool, {
            reach: clock.reach,
            backends: own,
            onChange: (tables, committed, scoped, rows) => clock.changed(tables, committed, scoped, rows),
          }),
        }),
      ),
    });
    // Named after the schema when one is given, so that an operator (or a test) can tell them apart.
    const listener = { ...connection, application_name: `reelbase changes${options.pgSchema ? ` ${options.pgSchema}` : ''}` };
    const stopListening = listenForChanges(listener, clock, own);
    attachReadCache(db, new ReadCache(clock));
    // Reports over many rows on connections of their own (opened when first used): however many a
    // dashboard asks for at once, they never hold the pool's connections that every request needs.
    const longReads = new Kysely<DB>({
      dialect: new SchemaPostgresDialect({ pool: longReadPool(connection, options.pgSchema) }),
    });
    return {
      db,
      dialect: 'postgres',
      clock,
      longReads,
      statistics: STATISTICS_KEPT_BY_THE_DATABASE,
      destroy: async () => {
        try {
          await stopListening();
          await longReads.destroy();
          await db.destroy();
        } finally {
          clock.close();
        }
      },
    };
  }
  if (options.url) throw new Error('DATABASE_URL must start with postgres:// or postgresql://');
  const file = options.sqlitePath ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  // A write that finds the file's lock taken waits asynchronously, not in SQLite's sleep on the event loop (src/db/sqlite-busy.ts).
  sqlite.pragma('busy_timeout = 0');
  sqlite.pragma('synchronous = NORMAL');
  // Lists at size walk index entries by the hundred thousand (docs/performance.md, "Lists at size"):
  // read through a memory map, with a larger page cache, the middle page of a million-row player
  // list took 17 ms instead of 35. Both are ceilings: the map's pages are the file's, shared with
  // the OS cache; the page cache grows only as far as it is used.
  if (options.memoryMap !== false) sqlite.pragma('mmap_size = 268435456');
  sqlite.pragma('cache_size = -65536');
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const schemaVersion = sqlite.prepare('pragma schema_version').pluck();
  const readSchemaVersion = () => schemaVersion.get() as number;
  const counts = new ChangeCountReader(sqlite, readSchemaVersion);
  const clock = new SqliteChangeClock(
    () => dataVersion.get() as number,
    options.strictChanges ? 0 : 1,
    readSchemaVersion,
    () => counts.read(),
  );
  // The driver runs the statement inside `executeQuery`, where the organization it writes is told.
  // The scope is told at every attempt of a statement the lock made wait: the waiting wraps it.
  const dialect: Dialect = waitingForTheWriteLock(
    scopingWrites(new SqliteDialect({ database: wrapSqlite(sqlite, (statement) => clock.changed(statement, organizationBeingWritten(), rowsBeingWritten())) })),
    sqlite,
  );
  const db = new Kysely<DB>({ dialect });
  attachReadCache(db, new ReadCache(clock));
  const background = options.backgroundCheckpoints && file !== ':memory:' ? options.backgroundCheckpoints : null;
  if (background) sqlite.pragma(`wal_autocheckpoint = ${SERVER_CHECKPOINT_PAGES}`);
  const checkpointer = background ? new SqliteCheckpointer(file, background === true ? {} : background) : null;
  const readThread = file === ':memory:' ? null : new SqliteReadThread(file, db);
  const statistics = new SqlitePlannerStatistics(db, file === ':memory:' ? null : file, { onGathered: () => readThread?.statisticsChanged() });
  // Statistics another process's sweep gathered: read once they held still for a look (within two
  // minutes), and the read thread told.
  statistics.follow();
  return {
    db,
    dialect: 'sqlite',
    clock,
    longReads: readThread?.db ?? db,
    statistics,
    ...(file === ':memory:' ? {} : { file }),
    destroy: async () => {
      clock.close();
      await statistics.close();
      await readThread?.close();
      await checkpointer?.stop();
      return db.destroy();
    },
  };
}
