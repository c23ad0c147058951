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
/**
 * For a table with an organization_id column: each organization whose rows it changed, with the
 * table's count just after the last of them (`at`), so that a process that saw the table's count move
 * from n reads the organizations with `at` > n and drops only their cached reads. A row without an
 * organization is kept under -1, and drops the whole table. Indexed by `at`, so that the reader reads
 * the organizations that changed, not all of the table's (3 ms at 100,000); the index costs a write
 * about 10 µs of 110.
 */
export const ORGANIZATION_CHANGES_TABLE = 'reelbase_organization_changes';
const NO_ORGANIZATION = -1;
/**
 * Tables of organizations that only triggers write: they count without noting organizations. The
 * counters' tables: each of their changes comes with a change of the table they count, noted by
 * organization, and theirs would cost every write two more notes. The notes' own table: noting
 * its own changes would run every note's triggers twice (and recursive triggers would never end).
 */
const KEPT_BY_TRIGGERS: ReadonlySet<string> = new Set(['event_counts', 'event_pages', 'row_counts', 'row_pages', ORGANIZATION_CHANGES_TABLE]);
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
const COUNTING_TRIGGERS = `select name, tbl_name as tbl, sql from sqlite_master where type = 'trigger' and name like '${TRIGGER_PREFIX.replace(/_/g, '\\_')}%' escape '\\'`;

/** The body of `table`'s counting trigger for `op`: its count, and with `organizations` the organizations of its rows. */
function triggerBody(table: string, op: (typeof OPS)[number], organizations: boolean): string {
  const count = `update ${CHANGES_TABLE} set changes = changes + 1 where name = '${table}';`;
  if (!organizations) return count;
  // An update notes the row's organization before it only when it moved the row to another.
  const rows = op === 'insert' ? ['NEW'] : op === 'delete' ? ['OLD'] : ['NEW', 'OLD'];
  const noted = rows.map(
    (row, i) => `insert into ${ORGANIZATION_CHANGES_TABLE} (name, organization_id, at)
    select '${table}', coalesce(${row}.organization_id, ${NO_ORGANIZATION}), changes from ${CHANGES_TABLE} where name = '${table}'${i === 1 ? ' and OLD.organization_id is not NEW.organization_id' : ''}
    on conflict (name, organization_id) do update set at = excluded.at;`,
  );
  return [count, ...noted].join('\n    ');
}

const createTrigger = (table: string, op: (typeof OPS)[number], organizations: boolean) =>
  // As SQLite keeps it in sqlite_master (CREATE TRIGGER in capitals), so that the installer can tell an earlier release's.
  `CREATE TRIGGER "${triggerName(table, op)}" after ${op} on "${table}" begin\n    ${triggerBody(table, op, organizations)}\nend`;

/** Tables with an organization_id column. */
const WITH_ORGANIZATIONS = `select distinct m.name from sqlite_master m join pragma_table_info(m.name) c
  where m.type = 'table' and c.name = 'organization_id'`;

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
  await sql
    .raw(
      `create table if not exists ${ORGANIZATION_CHANGES_TABLE} (name text not null, organization_id integer not null, at integer not null, primary key (name, organization_id)) without rowid`,
    )
    .execute(db);
  await sql.raw(`create index if not exists ${ORGANIZATION_CHANGES_TABLE}_at on ${ORGANIZATION_CHANGES_TABLE} (name, at)`).execute(db);
  // A table whose name is not plain (one made by hand) is left without: it then counts as uncounted,
  // and every other connection's commit drops every cached read, as before the counts.
  const tables = (await sql.raw<{ name: string }>(COUNTED_TABLES).execute(db)).rows.map((r) => r.name).filter(plainName);
  const organizations = new Set(
    (await sql.raw<{ name: string }>(WITH_ORGANIZATIONS).execute(db)).rows.map((r) => r.name).filter((table) => !KEPT_BY_TRIGGERS.has(table)),
  );
  const have = new Map((await sql.raw<{ name: string; tbl: string; sql: string }>(COUNTING_TRIGGERS).execute(db)).rows.map((r) => [r.name, r]));
  const wanted = new Set<string>();
  for (const table of tables) {
    await sql.raw(`insert or ignore into ${CHANGES_TABLE} (name) values ('${table}')`).execute(db);
    for (const op of OPS) {
      const name = triggerName(table, op);
      const create = createTrigger(table, op, organizations.has(table));
      wanted.add(name);
      const found = have.get(name);
      if (found?.tbl === table && found.sql === create) continue;
      // On another table (this one's name before a rename), or of an earlier release: made again.
      if (found) await sql.raw(`drop trigger "${name}"`).execute(db);
      await sql.raw(create).execute(db);
    }
  }
  // Tables that became uncached, or went: their triggers and counts go (a dropped table's triggers went with it).
  for (const name of have.keys()) if (!wanted.has(name)) await sql.raw(`drop trigger if exists "${name}"`).execute(db);
  const kept = sql.join(tables.length > 0 ? tables : ['']);
  await sql`delete from ${sql.table(CHANGES_TABLE)} where name not in (${kept})`.execute(db);
  await sql`delete from ${sql.table(ORGANIZATION_CHANGES_TABLE)} where name not in (${kept})`.execute(db);
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
  /**
   * The organizations whose rows of `table` changed since its count was `since`; null when that is
   * not told (a table without organizations, a row without one): the whole table.
   */
  organizationsSince?: (table: string, since: number) => number[] | null;
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
  /** The tables whose triggers note the organizations of their rows, and the query of those. */
  private byOrganization: { tables: ReadonlySet<string>; since: BetterSqlite3.Statement } | null = null;
  private readonly organizationsSince = (table: string, since: number): number[] | null => {
    if (!this.byOrganization?.tables.has(table)) return null;
    const organizations = this.byOrganization.since.all(table, since) as number[];
    // A count that moved with nothing noted: not told by the notes (a trigger that only counts, made
    // by hand since the triggers were checked); the whole table, then.
    return organizations.length === 0 || organizations.includes(NO_ORGANIZATION) ? null : organizations;
  };

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
        const counted = this.hasTable(CHANGES_TABLE) && uncountedTables(this.sqlite).length === 0;
        this.readAll = counted ? this.sqlite.prepare(`select name, changes from ${CHANGES_TABLE}`).raw() : null;
        this.byOrganization = counted ? this.organizationTables() : null;
      }
      if (!this.readAll) return null;
      const counts = new Map(this.readAll.all() as Array<[string, number]>);
      // A schema changed between the two reads may have added a table without its trigger: not trusted.
      return this.schemaVersion() === schema ? { schema, counts, organizationsSince: this.organizationsSince } : null;
    } catch {
      // Busy (another connection rebuilding the log's index), or the table gone: anything may have changed.
      this.checkedSchema = null;
      return null;
    }
  }

  /** Tables whose three triggers all note organizations (an earlier release's count only); none without the table of them. */
  private organizationTables(): { tables: ReadonlySet<string>; since: BetterSqlite3.Statement } | null {
    if (!this.hasTable(ORGANIZATION_CHANGES_TABLE)) return null;
    const triggers = this.sqlite.prepare(COUNTING_TRIGGERS).all() as Array<{ name: string; tbl: string; sql: string }>;
    const noting = new Map<string, number>();
    for (const t of triggers) if (t.sql.includes(`insert into ${ORGANIZATION_CHANGES_TABLE} `)) noting.set(t.tbl, (noting.get(t.tbl) ?? 0) + 1);
    const tables = new Set([...noting].filter(([, n]) => n === OPS.length).map(([table]) => table));
    const since = this.sqlite.prepare(`select organization_id from ${ORGANIZATION_CHANGES_TABLE} where name = ? and at > ?`).pluck();
    return { tables, since };
  }

  private hasTable(name: string): boolean {
    return this.sqlite.prepare(`select 1 from sqlite_master where type = 'table' and name = ?`).get(name) !== undefined;
  }
}

/** The tables whose counts differ between two readings (a table in one of them only counts as changed). */
export function tablesChanged(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): string[] {
  const changed: string[] = [];
  for (const [table, count] of after) if (before.get(table) !== count) changed.push(table);
  for (const table of before.keys()) if (!after.has(table)) changed.push(table);
  return changed;
}
