import { sql, type Kysely } from 'kysely';
import { bigint, bytes } from '../dialect.ts';

const DAY_MS = 86_400_000;

/**
 * A player's figures from its daily rollups (docs/analytics.md, "A player's figures"): each player's
 * day in `analytics_days` gets the sketches of its distinct viewers and addresses, kept by the same
 * rollup batches as the organization's days (`analytics_org_days`).
 *
 * The days rolled up before this migration have no sketches, and their reports may be gone
 * (ANALYTICS_RETENTION_DAYS): `analytics_rollup.player_days_since` is the first day whose every
 * report is rolled up after it (the day after the newest day already rolled up; 0 when none was).
 * A player's days before it are read from their reports, as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('analytics_days').addColumn('viewers', bytes(db)).execute();
  await db.schema.alterTable('analytics_days').addColumn('emails', bytes(db)).execute();
  await db.schema
    .alterTable('analytics_rollup')
    .addColumn('player_days_since', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  // Every report rolled up so far is in a day up to the newest of analytics_days (a scan of the days,
  // not of the reports).
  const { newest } = await db
    .selectFrom('analytics_days')
    .select(sql<number | string | null>`max(day)`.as('newest'))
    .executeTakeFirstOrThrow();
  if (newest !== null) {
    await db
      .updateTable('analytics_rollup')
      .set({ player_days_since: Number(newest) + DAY_MS })
      .where('id', '=', 1)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('analytics_rollup').dropColumn('player_days_since').execute();
  await db.schema.alterTable('analytics_days').dropColumn('emails').execute();
  await db.schema.alterTable('analytics_days').dropColumn('viewers').execute();
}
