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

  /** Counts one hit of `key` in its window (a new window of `windowMs` when the last one has passed), atomically. */
  async hit(key: string, windowMs: number, now: number): Promise<Counted> {
    const row = await this.db
      .insertInto('rate_limits')
      .values({ key, count: 1, reset_at: now + windowMs })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql<number>`case when rate_limits.reset_at <= ${now} then 1 else rate_limits.count + 1 end`,
          reset_at: sql<number>`case when rate_limits.reset_at <= ${now} then ${now + windowMs} else rate_limits.reset_at end`,
        }),
      )
      .returning(['count', 'reset_at'])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), resetAt: Number(row.reset_at) };
  }

  /** The count of `key` in its current window, without counting; zero when the window has passed. */
  async read(key: string, now: number): Promise<Counted> {
    const row = await this.db.selectFrom('rate_limits').select(['count', 'reset_at']).where('key', '=', key).executeTakeFirst();
    if (!row || Number(row.reset_at) <= now) return { count: 0, resetAt: now };
    return { count: Number(row.count), resetAt: Number(row.reset_at) };
  }
}
