import { sql, type Kysely } from 'kysely';
import { bigint, notNullDefault } from '../dialect.ts';

const DAY_MS = 86_400_000;

/**
 * A video's audience retention from daily rollups (docs/analytics.md, "A video's retention"):
 * `analytics_retention_days` keeps, per video and UTC day, the views that started then and their
 * edges (JSON pairs of [second, net change in viewers]), added by the same rollup batches as the
 * players' days.
 *
 * As for migration 0036, `analytics_rollup.retention_days_since` is the first day whose every report
 * is rolled up after this migration (the day after the newest rolled-up day; 0 when none was), and a
 * video's days before it are read from their reports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_retention_days')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('video_id', 'integer', (c) => c.notNull())
    .addColumn('day', bigint, (c) => c.notNull())
    .addColumn('views', 'integer', notNullDefault(0))
    .addColumn('edges', 'text', (c) => c.notNull().defaultTo('[]'))
    .addPrimaryKeyConstraint('analytics_retention_days_pk', ['organization_id', 'video_id', 'day'])
    .execute();
  await db.schema
    .alterTable('analytics_rollup')
    .addColumn('retention_days_since', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  const { newest } = await db
    .selectFrom('analytics_days')
    .select(sql<number | string | null>`max(day)`.as('newest'))
    .executeTakeFirstOrThrow();
  if (newest !== null) {
    await db
      .updateTable('analytics_rollup')
      .set({ retention_days_since: Number(newest) + DAY_MS })
      .where('id', '=', 1)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('analytics_rollup').dropColumn('retention_days_since').execute();
  await db.schema.dropTable('analytics_retention_days').execute();
}
