import SqliteDatabase from 'better-sqlite3';

/**
 * What processes of one machine (API_PROCESSES) ring after each of their PostgreSQL commits, and
 * look at before each cached read: a SQLite file in DATA_DIR whose one row each ring updates.
 * `PRAGMA data_version` then tells a process, synchronously and in about a microsecond, that another
 * committed since it last looked; PostgreSQL's own notifications can arrive after a request that
 * followed the commit (src/db/change-clock.ts). Nothing in it needs to survive a crash.
 */
export class ChangeBell {
  private readonly db: SqliteDatabase.Database;
  private readonly update: SqliteDatabase.Statement;
  private readonly version: SqliteDatabase.Statement;

  constructor(file: string) {
    this.db = new SqliteDatabase(file);
    // Short: a ring waits on the event loop, and one that fails only turns the read cache off (src/db/change-clock.ts).
    this.db.pragma('busy_timeout = 200');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = OFF');
    this.db.exec('create table if not exists bell (id integer primary key, rings integer not null)');
    this.db.exec('insert or ignore into bell (id, rings) values (1, 0)');
    this.update = this.db.prepare('update bell set rings = rings + 1 where id = 1');
    this.version = this.db.prepare('pragma data_version').pluck();
  }

  /** Tells the other processes that this one committed a change. */
  ring(): void {
    this.update.run();
  }

  /** Moves when another process rang since the last call (not when this one did). */
  heard(): number {
    return this.version.get() as number;
  }

  close(): void {
    this.db.close();
  }
}
