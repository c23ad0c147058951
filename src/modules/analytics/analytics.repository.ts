import { sql, type Insertable, type Kysely } from 'kysely';
import type { AnalyticsEventsTable, DB } from '../../db/schema.ts';

export type NewAnalyticsEvent = Insertable<AnalyticsEventsTable>;

/** A player's totals over a period, straight from its stored reports. */
export interface PlayerTotals {
  loads: number;
  plays: number;
  views: number;
  completions: number;
  unique_viewers: number;
  watch_seconds: number;
  identified_viewers: number;
  cta_clicks: number;
}

export class AnalyticsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Inserts the reports; answers the dedup keys that were new (a replayed report is skipped). */
  async insertMany(rows: NewAnalyticsEvent[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const inserted = await this.db
      .insertInto('analytics_events')
      .values(rows)
      .onConflict((oc) => oc.column('dedup_key').doNothing())
      .returning('dedup_key')
      .execute();
    return new Set(inserted.map((r) => r.dedup_key));
  }

  async playerTotals(organizationId: number, playerId: number, fromMs: number, toMs: number): Promise<PlayerTotals> {
    const row = await this.db
      .selectFrom('analytics_events')
      .select([
        sql<number>`count(distinct case when type = 'load' then session_id end)`.as('loads'),
        sql<number>`count(distinct case when type = 'view' and percent = 0 then session_id end)`.as('plays'),
        sql<number>`sum(case when type = 'view' and percent = 0 then 1 else 0 end)`.as('views'),
        sql<number>`sum(case when type = 'view' and percent = 100 then 1 else 0 end)`.as('completions'),
        sql<number>`count(distinct case when type = 'view' and percent = 0 then coalesce(visitor_id, session_id) end)`.as('unique_viewers'),
        sql<number>`sum(case when type = 'attention_span' then watched_seconds else 0 end)`.as('watch_seconds'),
        sql<number>`count(distinct case when type = 'identified_view' then email end)`.as('identified_viewers'),
        sql<number>`sum(case when type = 'cta_click' then 1 else 0 end)`.as('cta_clicks'),
      ])
      .where('organization_id', '=', organizationId)
      .where('player_id', '=', playerId)
      .where('created_at', '>=', fromMs)
      .where('created_at', '<', toMs)
      .executeTakeFirstOrThrow();
    // PostgreSQL answers counts as bigint strings and sums of nothing as null.
    const n = (v: unknown) => Number(v ?? 0);
    return {
      loads: n(row.loads),
      plays: n(row.plays),
      views: n(row.views),
      completions: n(row.completions),
      unique_viewers: n(row.unique_viewers),
      watch_seconds: n(row.watch_seconds),
      identified_viewers: n(row.identified_viewers),
      cta_clicks: n(row.cta_clicks),
    };
  }
}
