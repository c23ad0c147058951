import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export interface Counted {
  count: number;
  /** Epoch milliseconds. */
  resetAt: number;
}

/** Counters of the public limits in the database, shared by every process of a deployment. */
export class RateLimitsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Counts `hits` hits of each key in its window (a new window of `windowMs` when the last one has
   * passed), all in one statement, atomically. Keys must be distinct. Answers each key's count after.
   */
  async hitMany(counts: ReadonlyArray<{ key: string; hits: number; windowMs: number }>, now: number): Promise<Map<string, Counted>> {
    const rows = await this.db
      .insertInto('rate_limits')
      .values(counts.map((c) => ({ key: c.key, count: c.hits, reset_at: now + c.windowMs })))
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql<number>`case when rate_limits.reset_at <= ${now} then excluded.count else rate_limits.count + excluded.count end`,
          reset_at: sql<number>`case when rate_limits.reset_at <= ${now} then excluded.reset_at else rate_limits.reset_at end`,
        }),
      )
      .returning(['key', 'count', 'reset_at'])
      .execute();
    return new Map(rows.map((r) => [r.key, { count: Number(r.count), resetAt: Number(r.reset_at) }]));
  }

  /** The count of `key` in its current window, without counting; zero when the window has passed. */
  async read(key: string, now: number): Promise<Counted> {
    const row = await this.db.selectFrom('rate_limits').select(['count', 'reset_at']).where('key', '=', key).executeTakeFirst();
    if (!row || Number(row.reset_at) <= now) return { count: 0, resetAt: now };
    return { count: Number(row.count), resetAt: Number(row.reset_at) };
  }
}
