import type pg from 'pg';
import { pgDriver } from './pg-driver.ts';
import type { PostgresPool } from 'kysely';
import type { PgChangeClock } from './change-clock.ts';
import { writesOnlyUncached } from './uncached-tables.ts';
import { ownRows, ownScope, type StatementReach, type WriteReach } from './write-reach.ts';
import { organizationBeingWritten, rowsBeingWritten, type RowsTouched } from './write-scope.ts';
import { isAnalysisError, isPoolerLoss, isStalePlan, StatementNames } from './pg-statement-names.ts';
import { CHANGE_CHANNEL, ChangeNotices, ORGANIZATION_CHANNEL, TABLE_CHANNEL } from './pg-change-notices.ts';

const wrapped = new WeakSet<object>();

/** The SQL text of a `client.query` call (a string or a query config). */
const textOf = (arg: unknown): string =>
  typeof arg === 'string' ? arg : typeof (arg as { text?: unknown })?.text === 'string' ? (arg as { text: string }).text : '';

// Results that cannot have changed anything another read could see.
function unchanged(result: pg.QueryResult): boolean {
  const { command, rowCount } = result;
  if (command === 'SELECT' || command === 'SHOW' || command === 'SET' || command === 'LISTEN') return true;
  return (command === 'INSERT' || command === 'UPDATE' || command === 'DELETE') && rowCount === 0;
}

/** What the pool's wrapper tells, and keeps, for the change clock. */
export interface PoolWatch {
  reach: WriteReach;
  /** Our pool's backends' process ids: their commits' notifications are ours, already counted. */
  backends: Set<number>;
  /**
   * Tables that may have changed (null: unknown); `committed`: other connections can see it already;
   * `scoped`: those of the tables whose changed rows are all of one organization, with it.
   */
  onChange: (
    tables: readonly string[] | null,
    committed: boolean,
    scoped: ReadonlyMap<string, number> | null,
    rows: ReadonlyMap<string, RowsTouched> | null,
  ) => void;
}

/** What a transaction wrote to one table: the one organization whose rows it changed (null: any), and which of them. */
interface Written {
  organization: number | null;
  rows: RowsTouched;
}

/** Two writes to a table as one: the same organization's, or anyone's; one row only when both touched only it (or none). */
function both(a: Written, b: Written): Written {
  if (a.organization === null || a.organization !== b.organization) return { organization: null, rows: 'some' };
  const rows = a.rows === 'none' ? b.rows : b.rows === 'none' || a.rows === b.rows ? a.rows : 'some';
  return { organization: a.organization, rows };
}

function scopedOf(written: ReadonlyMap<string, Written>): ReadonlyMap<string, number> | null {
  let scoped: Map<string, number> | null = null;
  for (const [table, { organization }] of written) if (organization !== null) (scoped ??= new Map()).set(table, organization);
  return scoped;
}

function rowsOf(written: ReadonlyMap<string, Written>): ReadonlyMap<string, RowsTouched> | null {
  let touched: Map<string, RowsTouched> | null = null;
  for (const [table, { organization, rows }] of written) if (organization !== null && rows !== 'some') (touched ??= new Map()).set(table, rows);
  return touched;
}

const processIdOf = (client: object): number | undefined => (client as { processID?: number }).processID;

const POOLER_WARNING =
  'A prepared statement was lost between Reelbase and PostgreSQL (a connection pooler in transaction mode?): ' +
  'statements now go unnamed, each planned every time it is sent. docs/deployment.md says which poolers keep them.';

/**
 * The pool Kysely's PostgreSQL dialect uses, with `onChange` called after every statement of this
 * process that may have changed rows (with the tables it may have changed), and after the COMMIT of a
 * transaction that ran one (with all of them), so that our own writes move the change clock before the
 * caller goes on: a request sees the writes of the requests before it at once, without waiting for the
 * notification about them. The COMMIT matters: a read over another connection between a write and its
 * commit may have cached the old row. A transaction that only read moves nothing. `committed` says
 * whether other connections can see the change already (a COMMIT, or a statement outside a
 * transaction): only then is it worth telling other processes.
 */
export function wrapPgPool(pool: pg.Pool, watch: PoolWatch): PostgresPool {
  pool.on('remove', (client) => {
    const pid = processIdOf(client);
    if (pid !== undefined) watch.backends.delete(pid);
  });
  const names = new StatementNames();
  return {
    async connect() {
      const client = await pool.connect();
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const pid = processIdOf(client);
        if (pid !== undefined) watch.backends.add(pid);
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
        let wrote = false;
        let inTransaction = false;
        // What the open transaction wrote, each table with the one organization whose rows it changed
        // (null: any) and which of them; null once one of its statements could be anywhere.
        let written: Map<string, Written> | null = new Map();
        const ended = (committed: boolean) => {
          if (wrote) watch.onChange(written && [...written.keys()], committed, written && scopedOf(written), written && rowsOf(written));
          wrote = false;
          inTransaction = false;
        };
        const wroteTo = (reach: StatementReach, organization: number | null, rows: RowsTouched) => {
          wrote = true;
          const { tables } = reach;
          const scoped = ownScope(reach, organization);
          const touched = ownRows(reach, rows);
          if (tables === null) written = null;
          else if (written)
            for (const table of tables) {
              const whose = scoped?.get(table) ?? null;
              const write: Written = { organization: whose, rows: whose === null ? 'some' : (touched?.get(table) ?? 'some') };
              const before = written.get(table);
              written.set(table, before ? both(before, write) : write);
            }
          watch.onChange(tables, !inTransaction, scoped, touched);
        };
        // Kysely's statements (a text and its parameters) go as prepared statements once they recur
        // (src/db/pg-statement-names.ts); not before this process's migrations have run, one of which
        // could alter a table between two of its reads and meet a stale plan inside its transaction.
        const send = async (args: unknown[], text: string): Promise<pg.QueryResult | pg.QueryResult[]> => {
          const preparable = watch.reach.learned && args.length === 2 && typeof args[0] === 'string' && Array.isArray(args[1]);
          const name = preparable ? names.nameOf(text) : undefined;
          if (name === undefined) return query(...args);
          try {
            return await query({ name, text, values: args[1] });
          } catch (err) {
            // A pooler's loss first: "already exists" (42P05) is of class 42 too.
            if (isPoolerLoss(err)) {
              if (names.stop()) process.emitWarning(POOLER_WARNING, { code: 'REELBASE_PG_UNNAMED' });
            } else if (isStalePlan(err) || isAnalysisError(err)) names.refuse(text);
            else throw err;
            // Inside a transaction the failed statement has aborted it: it fails as the transaction does.
            if (inTransaction) throw err;
            return query(...args);
          }
        };
        (client as { query: unknown }).query = async (...args: unknown[]) => {
          // Told while Kysely's connection hands the statement over, before its first await (src/db/write-scope.ts).
          const organization = organizationBeingWritten();
          const rows = rowsBeingWritten();
          let result: pg.QueryResult | pg.QueryResult[];
          const text = textOf(args[0]);
          try {
            result = await send(args, text);
          } catch (err) {
            // The answer may be what was lost (a connection dropped after the server committed): a
            // COMMIT counts as done, and a write outside a transaction as made. A statement that
            // failed inside a transaction made nothing visible; the transaction goes on or rolls back.
            if (/^\s*commit\b/i.test(text)) ended(true);
            else if (!inTransaction && !/^\s*select\b/i.test(text) && !writesOnlyUncached(text)) wroteTo(watch.reach.of(text), organization, rows);
            throw err;
          }
          // Several statements in one text (a simple query) answer one result each: where they wrote is not told.
          if (Array.isArray(result)) {
            wroteTo({ tables: null, own: null }, null, 'some');
            return result;
          }
          const command = (result as pg.QueryResult | undefined)?.command;
          // `start transaction …` (an isolation level or access mode) is tagged START.
          if (command === 'BEGIN' || command === 'START') {
            wrote = false;
            written = new Map();
            inTransaction = true;
          }
          // ROLLBACK TO SAVEPOINT has the tag ROLLBACK too, and the transaction goes on.
          else if (command === 'COMMIT' || (command === 'ROLLBACK' && !/^\s*rollback\s+to\b/i.test(text))) {
            ended(command === 'COMMIT');
          } else if ((!result || !unchanged(result)) && !writesOnlyUncached(text)) {
            wroteTo(watch.reach.of(text), organization, rows);
          }
          return result;
        };
      }
      return client;
    },
    end: () => pool.end(),
  };
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Keeps one connection LISTENing for the change triggers' notifications about our schema, and tells
 * the clock what each commit changed (src/db/pg-change-notices.ts; `own`: our pool's backends). While
 * the connection is down the clock reads null (nothing is cached, since other processes' commits could
 * go unseen) and it reconnects with backoff.
 * Answers a function that closes it.
 */
export function listenForChanges(config: pg.ClientConfig, clock: PgChangeClock, own: ReadonlySet<number>): () => Promise<void> {
  let client: pg.Client | null = null;
  let closed = false;
  let retry = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | null = null;

  const drop = (c: pg.Client) => {
    c.removeAllListeners();
    c.on('error', () => {});
    return c.end().catch(() => {});
  };

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    clock.listening(false);
    void drop(c);
    if (closed) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, retry);
    timer.unref();
    retry = Math.min(retry * 2, RETRY_MAX_MS);
  };

  const connect = async () => {
    const c = new (pgDriver().Client)(config);
    client = c;
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    try {
      await c.connect();
      const schema = (await c.query<{ schema: string }>('select current_schema() as schema')).rows[0].schema;
      const notices = new ChangeNotices(schema, clock, own);
      c.on('notification', (n) => {
        if (client === c) notices.take(n);
      });
      await c.query(`listen ${CHANGE_CHANNEL}`);
      await c.query(`listen ${TABLE_CHANNEL}`);
      await c.query(`listen ${ORGANIZATION_CHANNEL}`);
      if (client !== c) return;
      retry = RETRY_MIN_MS;
      clock.listening(true);
    } catch {
      lost(c);
    }
  };

  void connect();
  return async () => {
    closed = true;
    if (timer) clearTimeout(timer);
    clock.listening(false);
    const c = client;
    client = null;
    if (c) await drop(c);
  };
}
