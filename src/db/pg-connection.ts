import type pg from 'pg';
import { pgDriver } from './pg-driver.ts';
import type { PostgresPool } from 'kysely';
import type { PgChangeClock } from './change-clock.ts';
import { writesOnlyUncached } from './uncached-tables.ts';

/** The channel the change triggers notify on (src/db/pg-change-triggers.ts); the payload is the schema. */
export const CHANGE_CHANNEL = 'reelbase_changes';

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

/**
 * The pool Kysely's PostgreSQL dialect uses, with `onChange` called after every statement of this
 * process that may have changed rows, and after the COMMIT of a transaction that ran one, so that our
 * own writes move the change clock before the caller goes on: a request sees the writes of the requests
 * before it at once, without waiting for the notification about them. The COMMIT matters: a read over
 * another connection between a write and its commit may have cached the old row. A transaction that
 * only read moves nothing. `committed` says whether other connections can see the change already (a
 * COMMIT, or a statement outside a transaction): only then is it worth telling other processes.
 */
export function wrapPgPool(pool: pg.Pool, onChange: (committed: boolean) => void): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
        let wrote = false;
        let inTransaction = false;
        (client as { query: unknown }).query = async (...args: unknown[]) => {
          const result = await query(...args);
          const command = (result as pg.QueryResult | undefined)?.command;
          if (command === 'BEGIN') {
            wrote = false;
            inTransaction = true;
          }
          // ROLLBACK TO SAVEPOINT has the tag ROLLBACK too, and the transaction goes on.
          else if (command === 'COMMIT' || (command === 'ROLLBACK' && !/^\s*rollback\s+to\b/i.test(textOf(args[0])))) {
            if (wrote) onChange(command === 'COMMIT');
            wrote = false;
            inTransaction = false;
          } else if ((!result || !unchanged(result)) && !writesOnlyUncached(textOf(args[0]))) {
            wrote = true;
            onChange(!inTransaction);
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
 * the clock: each notification moves it; while the connection is down the clock reads null (nothing
 * is cached, since other processes' commits could go unseen) and it reconnects with backoff.
 * Answers a function that closes it.
 */
export function listenForChanges(config: pg.ClientConfig, clock: PgChangeClock): () => Promise<void> {
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
      c.on('notification', (n) => {
        if (n.payload === schema) clock.notified();
      });
      await c.query(`listen ${CHANGE_CHANNEL}`);
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
