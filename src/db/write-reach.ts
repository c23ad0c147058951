import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.ts';
import { isCountingTrigger } from './sqlite-change-counts.ts';
import type { RowsTouched } from './write-scope.ts';

// The statement forms Kysely compiles a write to one table into (SQLite's `or ignore`/`or replace`
// included). Anything else (a `with` before it, a table named with its schema, raw SQL) is unknown.
const WRITE = /^\s*(insert\s+(?:or\s+([a-z]+)\s+)?into|replace\s+into|update(?:\s+or\s+([a-z]+))?|delete\s+from)\s+"([^"]+)"(?!\s*\.)/i;
// The same in a trigger's body, where names are written bare as often as quoted (`only`: PostgreSQL's
// table without its children). A name followed by a dot is a schema's: such a body counts as opaque.
const BODY_WRITE =
  /\b(insert\s+(?:or\s+([a-z]+)\s+)?into|replace\s+into|update(?:\s+or\s+([a-z]+))?|delete\s+from)\s+(?:only\s+)?("?)([a-z_][a-z0-9_]*)\4(\s*\.)?/gi;

export type Op = 'insert' | 'update' | 'delete';
const OPS: readonly Op[] = ['insert', 'update', 'delete'];

/** The operations a statement's keyword and text amount to: an upsert also updates, a replace also deletes. */
function opsOf(keyword: string, orWhat: string | undefined, statement: string): Op[] {
  const k = keyword.toLowerCase();
  // SQLite's `update or replace` may delete the rows its new values conflict with.
  if (k.startsWith('update')) return orWhat?.toLowerCase() === 'replace' ? ['update', 'delete'] : ['update'];
  if (k.startsWith('delete')) return ['delete'];
  if (k.startsWith('replace') || orWhat?.toLowerCase() === 'replace') return ['insert', 'update', 'delete'];
  return /\bon\s+conflict\b[^]*\bdo\s+update\b/i.test(statement) ? ['insert', 'update'] : ['insert'];
}

/** The table a statement writes and how, or null when it cannot be told from its text. */
export function writeOf(statement: string): { table: string; ops: Op[] } | null {
  const m = WRITE.exec(statement);
  return m ? { table: m[4], ops: opsOf(m[1], m[2] ?? m[3], statement) } : null;
}

/**
 * What a write to each table can change besides that table, by operation ("events insert"): the
 * tables whose rows a foreign key cascades to (or sets null, or a default, in), and those a trigger
 * on it writes, followed through. Null: a trigger whose writes cannot be read off its text (dynamic
 * SQL), so such a write may have changed anything.
 */
export type Reach = ReadonlyMap<string, ReadonlySet<string> | null>;

const node = (table: string, op: Op) => `${table} ${op}`;

/** What a statement may change: the tables (itself included; null: unknown) and its own table. */
export interface StatementReach {
  tables: readonly string[] | null;
  /**
   * The table the statement itself writes, when nothing it reaches (a cascade, a trigger) writes that
   * table again: only then can its rows changed be told by the statement's own conditions
   * (src/db/write-scope.ts).
   */
  own: string | null;
}

const UNKNOWN: StatementReach = { tables: null, own: null };

/** The tables whose changes by this statement were one organization's: its own table, when both are known. */
export function ownScope({ own }: StatementReach, organization: number | null): ReadonlyMap<string, number> | null {
  return own !== null && organization !== null ? new Map([[own, organization]]) : null;
}

/** Which existing rows of its own table a statement scoped by `ownScope` touched, for that table. */
export function ownRows({ own }: StatementReach, rows: RowsTouched): ReadonlyMap<string, RowsTouched> | null {
  return own !== null && rows !== 'some' ? new Map([[own, rows]]) : null;
}

/** The tables a statement may change, itself included; null when that is unknown. Kept per statement text. */
export class WriteReach {
  private reach: Reach = new Map();
  private known = false;
  private readonly byStatement = new Map<string, StatementReach>();

  /** Until the schema has been read (after the migrations), every write counts as unknown. */
  learn(reach: Reach): void {
    this.reach = reach;
    this.known = true;
    this.byStatement.clear();
  }

  /** The schema changed since it was read: every write counts as unknown until it is read again. */
  forget(): void {
    this.known = false;
    this.byStatement.clear();
  }

  /** Whether the schema has been read: this process's migrations are behind it. */
  get learned(): boolean {
    return this.known;
  }

  of(statement: string): StatementReach {
    if (!this.known) return UNKNOWN;
    let found = this.byStatement.get(statement);
    if (found !== undefined) return found;
    found = this.resolve(statement);
    // Statements are few (Kysely's SQL per query shape); a bulk insert's text varies with its row count.
    if (this.byStatement.size >= 2_000) this.byStatement.clear();
    this.byStatement.set(statement, found);
    return found;
  }

  /** What changes of `tables` (by any operation, however made) may have reached besides them; null: unknown. */
  ofTables(tables: readonly string[]): string[] | null {
    if (!this.known) return null;
    const all = new Set(tables);
    for (const table of tables) {
      for (const op of OPS) {
        const further = this.reach.get(node(table, op));
        if (further === null) return null;
        for (const reached of further ?? []) all.add(reached);
      }
    }
    return [...all];
  }

  private resolve(statement: string): StatementReach {
    const write = writeOf(statement);
    if (!write) return UNKNOWN;
    const all = new Set([write.table]);
    let own: string | null = write.table;
    for (const op of write.ops) {
      const further = this.reach.get(node(write.table, op));
      if (further === null) return UNKNOWN;
      for (const table of further ?? []) {
        if (table === write.table) own = null;
        all.add(table);
      }
    }
    return { tables: [...all], own };
  }
}

interface Edge {
  from: string;
  to: string;
}

const TRIGGER_OPS: Array<[Op, number]> = [
  ['insert', 4],
  ['delete', 8],
  ['update', 16],
];

/** The direct edges (cascading foreign keys, triggers) between "table op" nodes of the current schema, from its catalog. */
async function edges(db: Kysely<any>): Promise<{ edges: Edge[]; opaque: string[] }> {
  const out: Edge[] = [];
  const opaque: string[] = [];
  const acts = (action: string) => /^(cascade|set null|set default|c|n|d)$/i.test(action);
  const foreignKey = (referenced: string, referencing: string, onDelete: string, onUpdate: string) => {
    // A cascading delete deletes; setting null or a default, and a cascading update, update.
    if (acts(onDelete)) out.push({ from: node(referenced, 'delete'), to: node(referencing, /^(cascade|c)$/i.test(onDelete) ? 'delete' : 'update') });
    if (acts(onUpdate)) out.push({ from: node(referenced, 'update'), to: node(referencing, 'update') });
  };
  const trigger = (table: string, ops: Op[], body: string) => {
    // Dynamic SQL, or a function called for its effects, could write anywhere.
    if (/\b(execute|perform)\b/i.test(body)) for (const op of ops) opaque.push(node(table, op));
    for (const m of body.matchAll(BODY_WRITE)) {
      // An upsert's `do update set`: not a table.
      if (m[5].toLowerCase() === 'set') continue;
      if (m[6]) for (const op of ops) opaque.push(node(table, op));
      for (const op of ops) for (const to of opsOf(m[1], m[2] ?? m[3], body)) out.push({ from: node(table, op), to: node(m[5].toLowerCase(), to) });
    }
  };
  if (isPostgres(db)) {
    const fks = await sql<{ referenced: string; referencing: string; on_delete: string; on_update: string }>`
      select pc.relname as referenced, c.relname as referencing, k.confdeltype as on_delete, k.confupdtype as on_update from pg_constraint k
      join pg_class c on c.oid = k.conrelid join pg_class pc on pc.oid = k.confrelid
      join pg_namespace n on n.oid = c.relnamespace
      where k.contype = 'f' and n.nspname = current_schema()`.execute(db);
    for (const r of fks.rows) foreignKey(r.referenced, r.referencing, r.on_delete, r.on_update);
    // Foreign keys' own triggers are internal; the change triggers (src/db/pg-change-triggers.ts) only notify.
    const triggers = await sql<{ tbl: string; type: number; body: string }>`
      select c.relname as tbl, t.tgtype as type, p.prosrc as body from pg_trigger t
      join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace join pg_proc p on p.oid = t.tgfoid
      where not t.tgisinternal and n.nspname = current_schema() and t.tgname not like 'reelbase\\_changes\\_%'`.execute(db);
    for (const r of triggers.rows)
      trigger(
        r.tbl,
        TRIGGER_OPS.filter(([, bit]) => (Number(r.type) & bit) !== 0).map(([op]) => op),
        r.body,
      );
  } else {
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db);
    for (const { name } of tables.rows) {
      const fks = await sql<{ table: string; on_update: string; on_delete: string }>`select * from pragma_foreign_key_list(${name})`.execute(db);
      for (const fk of fks.rows) foreignKey(fk.table, name, fk.on_delete, fk.on_update);
    }
    const triggers = await sql<{ name: string; tbl: string; sql: string }>`select name, tbl_name as tbl, sql from sqlite_master where type = 'trigger'`.execute(
      db,
    );
    for (const r of triggers.rows) {
      // The change counters (src/db/sqlite-change-counts.ts) only count.
      if (isCountingTrigger(r.name)) continue;
      // The header names the operation (`after update of <columns> on <table>`); the body, what it writes.
      const begin = r.sql.search(/\bbegin\b/i);
      const event = /\b(insert|update|delete)\b(?:\s+of\b[^]*?)?\s+on\s/i.exec(r.sql.slice(0, begin));
      const ops: Op[] = event ? [event[1].toLowerCase() as Op] : ['insert', 'update', 'delete'];
      trigger(r.tbl, ops, r.sql.slice(begin));
    }
  }
  return { edges: out, opaque };
}

/** Each "table op" node's reach (see `Reach`), followed through cascades of cascades and triggers of triggers. */
export async function readReach(db: Kysely<any>): Promise<Reach> {
  const { edges: direct, opaque } = await edges(db);
  const next = new Map<string, Set<string>>();
  // Self-loops kept: a write that comes back to its own table (a self-referencing cascade) reaches it
  // again, so its rows changed are not only those its conditions name (`StatementReach.own`).
  for (const { from, to } of direct) (next.get(from) ?? next.set(from, new Set()).get(from)!).add(to);
  const reach = new Map<string, ReadonlySet<string> | null>();
  for (const start of next.keys()) {
    const seen = new Set<string>();
    const todo = [...next.get(start)!];
    let unknown = opaque.includes(start);
    while (todo.length > 0) {
      const n = todo.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      if (opaque.includes(n)) unknown = true;
      todo.push(...(next.get(n) ?? []));
    }
    reach.set(start, unknown ? null : new Set([...seen].map((n) => n.slice(0, n.indexOf(' ')))));
  }
  for (const n of opaque) reach.set(n, null);
  return reach;
}
