import { sql, type Kysely } from 'kysely';
import { bigint, bytes, double, notNullDefault } from '../dialect.ts';

const DAY_MS = 86_400_000;

/**
 * A player's hourly series from hourly rollups (docs/analytics.md, "A player's figures"):
 * `analytics_player_hours` keeps, per player and UTC hour, what `analytics_days` keeps per day (the
 * additive figures and the sketches of the distinct viewers and addresses), added by the same rollup
 * batches; a batch sums its hours into its days.
 *
 * As for migration 0036, `analytics_rollup.player_hours_since` is the first day whose every report is
 * rolled up after this migration (the day after the newest rolled-up day; 0 when none was), and a
 * player's hours before it are read from their reports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const counter = notNullDefault(0);
  await db.schema
    .createTable('analytics_player_hours')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('player_id', 'integer', (c) => c.notNull())
    .addColumn('hour', bigint, (c) => c.notNull())
    .addColumn('loads', 'integer', counter)
    .addColumn('plays', 'integer', counter)
    .addColumn('views', 'integer', counter)
    .addColumn('completions', 'integer', counter)
    .addColumn('watch_seconds', double(db), counter)
    .addColumn('cta_clicks', 'integer', counter)
    .addColumn('viewers', bytes(db))
    .addColumn('emails', bytes(db))
    .addPrimaryKeyConstraint('analytics_player_hours_pk', ['organization_id', 'player_id', 'hour'])
    .execute();
  await db.schema
    .alterTable('analytics_rollup')
    .addColumn('player_hours_since', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  const { newest } = await db
    .selectFrom('analytics_days')
    .select(sql<number | string | null>`max(day)`.as('newest'))
    .executeTakeFirstOrThrow();
  if (newest !== null) {
    await db
      .updateTable('analytics_rollup')
      .set({ player_hours_since: Number(newest) + DAY_MS })
      .where('id', '=', 1)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('analytics_rollup').dropColumn('player_hours_since').execute();
  await db.schema.dropTable('analytics_player_hours').execute();
}
