import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { writesOnlyUncached } from './uncached-tables.ts';

// better-sqlite3 refuses to bind JS booleans; PostgreSQL takes them as they are. Mapping them to 1/0
// here keeps repositories free of dialect checks (rows come back as 0/1 and mappers use Boolean()).
function bindable(params: ReadonlyArray<unknown>): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (typeof p === 'boolean') (out ??= params.slice())[i] = p ? 1 : 0;
  }
  return out ?? (params as unknown[]);
}

const STATEMENT_CACHE_SIZE = 500;

type Row = Record<string, unknown>;

/**
 * A function making a row object of the statement's columns from its values. better-sqlite3 builds
 * each row object a property at a time through V8's API: a list's page of 50 CTAs of ~25 columns spent
 * ~14 µs a row there; its values as an array and an object literal of a fixed shape take ~6 µs
 * (docs/performance.md). Duplicate names keep the last value, in the first one's place, as there. A
 * column named `__proto__`, which a literal would take for the prototype, is an own property.
 */
function rowMaker(stmt: BetterSqlite3.Statement): RowMaker {
  const names = stmt.columns().map((c) => c.name);
  if (names.includes('__proto__')) {
    const make = (values: unknown[]) => {
      const row: Row = {};
      for (let i = 0; i < names.length; i++) Object.defineProperty(row, names[i], { value: values[i], writable: true, enumerable: true, configurable: true });
      return row;
    };
    return { make, width: names.length };
  }
  const fields = names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ');
  // Names are the statement's own columns, quoted as JSON string literals.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const make = new Function('v', `return { ${fields} };`) as (values: unknown[]) => Row;
  return { make, width: names.length };
}

interface RowMaker {
  make: (values: unknown[]) => Row;
  width: number;
}

/**
 * Which schema the row makers were made for. SQLite compiles a statement again after the schema
 * changed, and a `select *` then answers other columns: another process's change (a migration beside
 * a running server) is seen once a millisecond has passed since the last look, as its data is by the
 * change clock; this connection's own DDL at once.
 */
class SchemaWatch {
  epoch = 0;
  private version: number;
  private checkedAt = performance.now();
  private readonly read: BetterSqlite3.Statement;

  constructor(db: BetterSqlite3.Database) {
    this.read = db.prepare('pragma schema_version').pluck();
    this.version = this.read.get() as number;
  }

  current(): number {
    const at = performance.now();
    if (at - this.checkedAt >= 1) {
      this.checkedAt = at;
      this.changed();
    }
    return this.epoch;
  }

  changed(): void {
    const version = this.read.get() as number;
    if (version !== this.version) {
      this.version = version;
      this.epoch++;
    }
  }
}

const DDL = /^\s*(create|alter|drop)\b/i;

/** What Kysely's SQLite driver calls on a prepared statement. */
class Prepared {
  readonly reader: boolean;
  private readonly writes: boolean;
  private maker: RowMaker | null;
  private epoch: number;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly sql: string,
    private readonly stmt: BetterSqlite3.Statement,
    private readonly onChange: (statement: string) => void,
    private readonly schema: SchemaWatch,
  ) {
    this.reader = stmt.reader;
    this.writes = !stmt.readonly && !writesOnlyUncached(sql);
    this.epoch = schema.epoch;
    this.maker = stmt.reader ? rowMaker(stmt) : null;
    if (this.maker) stmt.raw(true);
  }

  all(params: ReadonlyArray<unknown>) {
    const rows = this.fetch(params);
    // INSERT/UPDATE/DELETE … RETURNING: one row per changed row.
    if (this.writes && rows.length > 0) this.onChange(this.sql);
    return rows;
  }

  private fetch(params: ReadonlyArray<unknown>): unknown[] {
    if (!this.maker) return this.stmt.all(...bindable(params));
    const epoch = this.schema.current();
    const values = this.stmt.all(...bindable(params)) as unknown[][];
    // Compiled again for another schema: the columns are read again, after the run that compiled it.
    if (epoch !== this.epoch || (values.length > 0 && values[0].length !== this.maker.width)) {
      this.epoch = epoch;
      this.maker = rowMaker(this.stmt);
    }
    const { make } = this.maker;
    const rows = new Array<Row>(values.length);
    for (let i = 0; i < values.length; i++) rows[i] = make(values[i]);
    return rows;
  }

  run(params: ReadonlyArray<unknown>) {
    const result = this.stmt.run(...bindable(params));
    if (DDL.test(this.sql)) this.schema.changed();
    if (this.writes && result.changes > 0) this.onChange(this.sql);
    return result;
  }

  iterate(params: ReadonlyArray<unknown>) {
    // A statement being iterated cannot run anything else: streams get one of their own.
    return this.db.prepare(this.sql).iterate(...bindable(params));
  }
}

/**
 * Wraps better-sqlite3 for Kysely: booleans bound as 1/0; prepared statements cached by their SQL
 * text (preparing costs more than running a typical indexed query); and `onChange` called with every
 * statement that changed rows, for the change clock (src/db/change-clock.ts).
 */
export function wrapSqlite(db: BetterSqlite3.Database, onChange: (statement: string) => void): SqliteDatabase {
  const cache = new Map<string, Prepared>();
  const schema = new SchemaWatch(db);
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(sql: string) {
      let prepared = cache.get(sql);
      if (prepared) return prepared;
      // Kysely begins a transaction with a bare BEGIN, which takes the write lock only at the first
      // write: should another process (API_PROCESSES, the CLI, a worker) commit after the transaction
      // read, that write fails at once with SQLITE_BUSY_SNAPSHOT, which no busy timeout waits out (a
      // 500 under the mixed bench with two processes). Taken first, the lock is waited for instead.
      prepared = new Prepared(db, sql, db.prepare(sql === 'begin' ? 'begin immediate' : sql), onChange, schema);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(sql, prepared);
      return prepared;
    },
  };
}
