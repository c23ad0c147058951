import { sql, type Kysely } from 'kysely';
import { bigint, bytes, notNullDefault } from '../dialect.ts';

const DAY_MS = 86_400_000;

/**
 * A player's breakdown by country, device class or browser family from daily rollups (docs/analytics.md,
 * "A player's breakdown"): `analytics_breakdown_days` keeps, per player, dimension, UTC day and value
 * (`''` for unknown), the views (playback starts) and a sketch of their distinct viewers, added by the
 * same rollup batches as the players' days.
 *
 * Sketches cannot be made in SQL from the reports already rolled up: as for migration 0036,
 * `analytics_rollup.breakdown_days_since` is the first day whose every report is rolled up after this
 * migration (the day after the newest rolled-up day; 0 when none was), and a player's days before it
 * are read from their reports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_breakdown_days')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('player_id', 'integer', (c) => c.notNull())
    .addColumn('dimension', 'text', (c) => c.notNull())
    .addColumn('day', bigint, (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('views', 'integer', notNullDefault(0))
    .addColumn('viewers', bytes(db))
    .addPrimaryKeyConstraint('analytics_breakdown_days_pk', ['organization_id', 'player_id', 'dimension', 'day', 'value'])
    .execute();
  await db.schema
    .alterTable('analytics_rollup')
    .addColumn('breakdown_days_since', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  const { newest } = await db
    .selectFrom('analytics_days')
    .select(sql<number | string | null>`max(day)`.as('newest'))
    .executeTakeFirstOrThrow();
  if (newest !== null) {
    await db
      .updateTable('analytics_rollup')
      .set({ breakdown_days_since: Number(newest) + DAY_MS })
      .where('id', '=', 1)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('analytics_rollup').dropColumn('breakdown_days_since').execute();
  await db.schema.dropTable('analytics_breakdown_days').execute();
}
