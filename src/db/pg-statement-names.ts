// Statements Kysely sends again and again (a lookup by id, a page of a list) are prepared once per
// connection: a named statement is parsed, analysed and planned by PostgreSQL at its first execution
// on a backend, and only bound and run after that. On a mixed load that planning was a large share of
// the database server's time, which shares the machine's cores with ours (docs/performance.md).
import { createHash } from 'node:crypto';

/** Only data statements: a transaction's control or a migration's DDL is sent as it is. */
const PREPARABLE = /^\s*(?:select|insert|update|delete|with)\b/i;

/**
 * PostgreSQL's answer when a table's columns changed under a prepared `select *` or `returning *`:
 * told by the server function that raised it, since the message is in the server's language.
 */
export function isStalePlan(err: unknown): boolean {
  const { code, routine, message } = (err ?? {}) as { code?: unknown; routine?: unknown; message?: unknown };
  if (code !== '0A000') return false;
  return routine === 'RevalidateCachedQuery' || (typeof message === 'string' && message.includes('cached plan must not change result type'));
}

/**
 * An error PostgreSQL raises while analysing a statement (class 42: a column, operator or type that
 * does not fit), before it runs anything. A prepared statement keeps the parameter types PostgreSQL
 * inferred when it was first prepared: after another process's migration changed a column's type
 * (text to integer), the prepared `where "code" = $1` fails ("operator does not exist: integer =
 * text") where the same text sent unnamed is analysed afresh and runs. A statement that is wrong in
 * itself fails the same way unnamed, and that answer is the one returned.
 */
export function isAnalysisError(err: unknown): boolean {
  const { code } = (err ?? {}) as { code?: unknown };
  return typeof code === 'string' && code.startsWith('42');
}

/**
 * PostgreSQL's answer when the backend that runs a statement is not the one it was prepared on: a
 * connection pooler in transaction mode in front of the database (PgBouncer before 1.21, or without
 * `max_prepared_statements`) hands each transaction to any server connection.
 */
export function isPoolerLoss(err: unknown): boolean {
  const { code } = (err ?? {}) as { code?: unknown };
  return code === '26000' || code === '42P05';
}

/**
 * The name each statement text is prepared under, given once it has been sent `after` times (a text
 * seen once or twice, such as a bulk insert of so many rows or an `in` list of a rare length, is not
 * worth a plan kept in every backend), to at most `max` texts (what every backend of the pool may
 * come to keep; past that, texts go unnamed, which costs only their planning). A name is a digest of
 * its text, so that wherever a name is met (another process's statement on a backend a pooler hands
 * over) it stands for the same text, never for another statement that would run with our values.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  private readonly refused = new Set<string>();
  private given = 0;
  private stopped = false;

  constructor(
    private readonly after = 3,
    private readonly max = 500,
  ) {}

  nameOf(text: string): string | undefined {
    if (this.stopped) return undefined;
    const name = this.names.get(text);
    if (name !== undefined || this.given >= this.max) return name;
    if (this.refused.has(text) || !PREPARABLE.test(text)) return undefined;
    const seen = (this.counts.get(text) ?? 0) + 1;
    if (seen < this.after) {
      if (this.counts.size >= 10_000) this.counts.clear();
      this.counts.set(text, seen);
      return undefined;
    }
    this.counts.delete(text);
    this.given++;
    const fresh = `reelbase_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    this.names.set(text, fresh);
    return fresh;
  }

  /**
   * A text whose prepared plan went stale (another process changed a table's columns: a rolling
   * upgrade's migration) is sent unnamed from then on.
   */
  refuse(text: string): void {
    // Its place among the `max` goes to another text.
    if (this.names.delete(text)) this.given--;
    this.refused.add(text);
  }

  /**
   * Nothing is named any more: prepared statements do not survive the way to the database. Answers
   * whether naming was still on (the caller says so once).
   */
  stop(): boolean {
    const was = !this.stopped;
    this.stopped = true;
    return was;
  }
}
