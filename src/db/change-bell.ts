import { randomInt } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import type { RowsTouched } from './write-scope.ts';

/** What a commit changed, as the clock's generations take it (src/db/change-clock.ts): null tables, anything. */
export interface Ring {
  tables: readonly string[] | null;
  scoped?: ReadonlyMap<string, number> | null;
  rows?: ReadonlyMap<string, RowsTouched> | null;
}

/** Rings kept for the processes that have not looked yet; one that fell further behind hears everything. */
const KEPT = 10_000;
const EVERYTHING: Ring = { tables: null };

/**
 * What processes of one machine (API_PROCESSES) ring after each of their PostgreSQL commits, and
 * look at before each cached read: a SQLite file in DATA_DIR, each ring a row saying what the commit
 * changed (the tables, and the organization and rows of each where the writer could tell), so that
 * another process drops only those cached reads, as the writer did its own. `PRAGMA data_version`
 * tells a process, synchronously and in about a microsecond, that another rang since it last looked;
 * PostgreSQL's own notifications can arrive after a request that followed the commit
 * (src/db/change-clock.ts). Nothing in it needs to survive a crash.
 */
export class ChangeBell {
  private readonly db: SqliteDatabase.Database;
  private readonly insert: SqliteDatabase.Statement;
  private readonly prune: SqliteDatabase.Statement;
  private readonly since: SqliteDatabase.Statement;
  private readonly version: SqliteDatabase.Statement;
  private lastVersion: number;
  private lastSeen: number;
  /** An earlier release's bell (one counter, no rows), which a process of it may ring beside this one. */
  private earlier: SqliteDatabase.Statement | null = null;
  private earlierRings: number | undefined;
  /** This bell's rings, told from the others' (a process may open more than one). */
  private readonly ringer = randomInt(2 ** 47);

  constructor(file: string) {
    this.db = new SqliteDatabase(file);
    // Short: a ring waits on the event loop, and one that fails only turns the read cache off (src/db/change-clock.ts).
    this.db.pragma('busy_timeout = 200');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = OFF');
    // AUTOINCREMENT: an id is never given twice, so that a reader can tell the rings it missed.
    this.db.exec('create table if not exists rings (id integer primary key autoincrement, ringer integer not null, change text not null)');
    this.insert = this.db.prepare('insert into rings (ringer, change) values (?, ?)');
    this.prune = this.db.prepare('delete from rings where id <= ?');
    this.since = this.db.prepare('select id, ringer, change from rings where id > ? order by id');
    this.version = this.db.prepare('pragma data_version').pluck();
    this.earlierRings = this.earlierCount();
    this.lastVersion = this.version.get() as number;
    // The last id given, kept by SQLite for AUTOINCREMENT even once its row is pruned.
    this.lastSeen = (this.db.prepare("select seq from sqlite_sequence where name = 'rings'").pluck().get() as number | undefined) ?? 0;
  }

  /** Tells the other processes that this one committed `change`. */
  ring(change: Ring): void {
    const json = JSON.stringify({
      tables: change.tables,
      scoped: change.scoped ? [...change.scoped] : null,
      rows: change.rows ? [...change.rows] : null,
    });
    const id = Number(this.insert.run(this.ringer, json).lastInsertRowid);
    if (id % 1000 === 0) this.prune.run(id - KEPT);
  }

  /** What other processes rang since the last call, in order (not what this one did); nothing when none rang. */
  heard(): Ring[] {
    const version = this.version.get() as number;
    if (version === this.lastVersion) return [];
    // Read after the version, which is kept only once they are read: a ring between the two is read now,
    // and the version it moved finds nothing new at the next call.
    const rows = this.since.all(this.lastSeen) as Array<{ id: number; ringer: number; change: string }>;
    const earlierRings = this.earlierCount();
    this.lastVersion = version;
    // Rings pruned before this process looked, or an earlier release's ring: what they changed is not known.
    const unknown = (rows.length > 0 && rows[0].id !== this.lastSeen + 1) || earlierRings !== this.earlierRings;
    this.earlierRings = earlierRings;
    const heard: Ring[] = unknown ? [EVERYTHING] : [];
    if (rows.length === 0) return heard;
    this.lastSeen = rows[rows.length - 1].id;
    for (const row of rows) {
      if (row.ringer === this.ringer) continue;
      const {
        tables,
        scoped,
        rows: touched,
      } = JSON.parse(row.change) as {
        tables: string[] | null;
        scoped: Array<[string, number]> | null;
        rows: Array<[string, RowsTouched]> | null;
      };
      heard.push({ tables, scoped: scoped && new Map(scoped), rows: touched && new Map(touched) });
    }
    return heard;
  }

  /** The earlier release's counter, once its table is there (made by the first of its processes to start). */
  private earlierCount(): number | undefined {
    if (!this.earlier) {
      if (this.db.prepare("select 1 from sqlite_master where type = 'table' and name = 'bell'").get() === undefined) return undefined;
      this.earlier = this.db.prepare('select rings from bell where id = 1').pluck();
    }
    return this.earlier.get() as number | undefined;
  }

  close(): void {
    this.db.close();
  }
}
