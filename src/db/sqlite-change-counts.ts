import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { UNCACHED_TABLES } from './uncached-tables.ts';

/**
 * SQLite: what another connection's commit changed, table by table. `PRAGMA data_version` says only
 * that the file changed: without more, every commit of another process (API_PROCESSES, the CLI) or of
 * the analytics rollups' thread dropped every cached read, and two processes taking viewers' reports
 * emptied each other's caches at every batch (docs/analytics.md). So every table a cached read can
 * read counts its changed rows in a row of its own of CHANGES_TABLE, by triggers, inside the writing
 * transaction; a process that sees `data_version` move reads the counts and drops only the cached
 * reads of the tables whose count moved (src/db/change-clock.ts). Writes to the uncached tables (the
 * reports, the jobs) count nowhere. PostgreSQL needs none of this: its notifications name the table.
 */
export const CHANGES_TABLE = 'reelbase_changes';
const TRIGGER_PREFIX = 'reelbase_changes_';
const OPS = ['insert', 'update', 'delete'] as const;

/** The name of `table`'s counting trigger for `op`. */
const triggerName = (table: string, op: string) => `${TRIGGER_PREFIX}${op}_${table}`;

/** Whether a trigger is one of these counters (src/db/write-reach.ts leaves them out: they only count). */
export function isCountingTrigger(name: string): boolean {
  return name.startsWith(TRIGGER_PREFIX);
}

/** Ordinary tables (not virtual, not their shadow tables) that a cached read may read: those that must count. */
const COUNTED_TABLES = `
  select name from pragma_table_list where schema = 'main' and type = 'table'
    and name not like 'sqlite\\_%' escape '\\' and name not like 'kysely\\_%' escape '\\' and name <> '${CHANGES_TABLE}'
    and name not in (${UNCACHED_TABLES.map((t) => `'${t}'`).join(', ')})`;

/** The counting triggers, each with the table it is on (a table renamed keeps its triggers, under their old names). */
const COUNTING_TRIGGERS = `select name, tbl_name as tbl from sqlite_master where type = 'trigger' and name like '${TRIGGER_PREFIX.replace(/_/g, '\\_')}%' escape '\\'`;

/** Whether a table's name can be written into a trigger's SQL as it is (ours are plain identifiers). */
const plainName = (table: string) => /^[a-z_][a-z0-9_]*$/i.test(table);

/**
 * Gives every table that must count its row and its three triggers, and takes them off the tables
 * that need not: run after the migrations, in their transaction, at every start (so that a table a
 * migration adds counts without the migration having to remember it, and a committed schema is never
 * without them). Only what is missing is created: a start that finds them all changes no schema.
 */
export async function installChangeCounters(db: Kysely<any>): Promise<void> {
  await sql.raw(`create table if not exists ${CHANGES_TABLE} (name text primary key, changes integer not null default 0) without rowid`).execute(db);
  // A table whose name is not plain (one made by hand) is left without: it then counts as uncounted,
  // and every other connection's commit drops every cached read, as before the counts.
  const tables = (await sql.raw<{ name: string }>(COUNTED_TABLES).execute(db)).rows.map((r) => r.name).filter(plainName);
  const have = new Map((await sql.raw<{ name: string; tbl: string }>(COUNTING_TRIGGERS).execute(db)).rows.map((r) => [r.name, r.tbl]));
  const wanted = new Set<string>();
  for (const table of tables) {
    await sql.raw(`insert or ignore into ${CHANGES_TABLE} (name) values ('${table}')`).execute(db);
    for (const op of OPS) {
      const name = triggerName(table, op);
      wanted.add(name);
      if (have.get(name) === table) continue;
      // On another table (this one's name before a rename): made again on this one.
      if (have.has(name)) await sql.raw(`drop trigger "${name}"`).execute(db);
      await sql
        .raw(`create trigger "${name}" after ${op} on "${table}" begin update ${CHANGES_TABLE} set changes = changes + 1 where name = '${table}'; end`)
        .execute(db);
    }
  }
  // Tables that became uncached, or went: their triggers and counts go (a dropped table's triggers went with it).
  for (const name of have.keys()) if (!wanted.has(name)) await sql.raw(`drop trigger if exists "${name}"`).execute(db);
  await sql`delete from ${sql.table(CHANGES_TABLE)} where name not in (${sql.join(tables.length > 0 ? tables : [''])})`.execute(db);
}

/** The tables that must count their changes and cannot: a trigger or their row missing (for the counts' check and for tests; CHANGES_TABLE must exist). */
export function uncountedTables(sqlite: BetterSqlite3.Database): string[] {
  const on = new Map((sqlite.prepare(COUNTING_TRIGGERS).raw().all() as Array<[string, string]>).map(([name, tbl]) => [name, tbl]));
  const rows = new Set(sqlite.prepare(`select name from ${CHANGES_TABLE}`).pluck().all() as string[]);
  const tables = sqlite.prepare(COUNTED_TABLES).pluck().all() as string[];
  // Each needs its three triggers on itself, and its row for them to count in.
  return tables.filter((table) => !rows.has(table) || OPS.some((op) => on.get(triggerName(table, op)) !== table));
}

/** The counts as read at one moment, with the schema they were read under. */
export interface ChangeCounts {
  schema: number;
  counts: ReadonlyMap<string, number>;
}

/**
 * Reads the counts on the server's own connection. Null when they cannot be trusted to name every
 * change: inside a transaction (whose snapshot can be older than the `data_version` just read), or
 * while a table that must count has no trigger (a table created by hand, by a tool that does not
 * install them), or before the migrations made the table.
 */
export class ChangeCountReader {
  private checkedSchema: number | null = null;
  /** The counts' query, while the schema last checked has every table counted; null otherwise. */
  private readAll: BetterSqlite3.Statement | null = null;

  /** `schemaVersion`: PRAGMA schema_version on `sqlite` (the change clock's own). */
  constructor(
    private readonly sqlite: BetterSqlite3.Database,
    private readonly schemaVersion: () => number,
  ) {}

  read(): ChangeCounts | null {
    if (this.sqlite.inTransaction) return null;
    try {
      const schema = this.schemaVersion();
      if (schema !== this.checkedSchema) {
        this.checkedSchema = schema;
        const counted = this.hasTable() && uncountedTables(this.sqlite).length === 0;
        this.readAll = counted ? this.sqlite.prepare(`select name, changes from ${CHANGES_TABLE}`).raw() : null;
      }
      if (!this.readAll) return null;
      const counts = new Map(this.readAll.all() as Array<[string, number]>);
      // A schema changed between the two reads may have added a table without its trigger: not trusted.
      return this.schemaVersion() === schema ? { schema, counts } : null;
    } catch {
      // Busy (another connection rebuilding the log's index), or the table gone: anything may have changed.
      this.checkedSchema = null;
      return null;
    }
  }

  private hasTable(): boolean {
    return this.sqlite.prepare(`select 1 from sqlite_master where type = 'table' and name = '${CHANGES_TABLE}'`).get() !== undefined;
  }
}

/** The tables whose counts differ between two readings (a table in one of them only counts as changed). */
export function tablesChanged(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): string[] {
  const changed: string[] = [];
  for (const [table, count] of after) if (before.get(table) !== count) changed.push(table);
  for (const table of before.keys()) if (!after.has(table)) changed.push(table);
  return changed;
}
