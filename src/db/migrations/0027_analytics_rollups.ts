import type { Kysely } from 'kysely';
import { bigint, bytes, double, notNullDefault } from '../dialect.ts';

/**
 * Rollups of the stored reports (docs/analytics.md, "Rollups"):
 * - `analytics_days`: per organization, player and UTC day, the additive figures. Kept by the
 *   `analytics.rollup` job from the reports past `analytics_rollup.last_event_id`, and kept after the
 *   raw reports pass ANALYTICS_RETENTION_DAYS.
 * - `analytics_org_days`: per organization and day, sketches of the distinct viewers and addresses
 *   (src/modules/analytics/distinct-sketch.ts), so that the organization's distinct counts of a period
 *   merge one sketch per day.
 * - `analytics_identified`: per organization and address, when it was last given (written with the
 *   report): the organization's identified viewers, newest first, without reading the period's reports.
 * - `analytics_events (created_at)`: the retention sweep deletes the oldest reports by range.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const counter = notNullDefault(0);
  await db.schema
    .createTable('analytics_days')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('player_id', 'integer', (c) => c.notNull())
    .addColumn('day', bigint, (c) => c.notNull())
    .addColumn('loads', 'integer', counter)
    .addColumn('plays', 'integer', counter)
    .addColumn('views', 'integer', counter)
    .addColumn('completions', 'integer', counter)
    .addColumn('watch_seconds', double(db), counter)
    .addColumn('cta_clicks', 'integer', counter)
    .addPrimaryKeyConstraint('analytics_days_pk', ['organization_id', 'day', 'player_id'])
    .execute();
  await db.schema
    .createTable('analytics_org_days')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('day', bigint, (c) => c.notNull())
    .addColumn('viewers', bytes(db))
    .addColumn('emails', bytes(db))
    .addPrimaryKeyConstraint('analytics_org_days_pk', ['organization_id', 'day'])
    .execute();
  await db.schema
    .createTable('analytics_rollup')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('last_event_id', bigint, (c) => c.notNull())
    .execute();
  await db.insertInto('analytics_rollup').values({ id: 1, last_event_id: 0 }).execute();
  await db.insertInto('housekeeping_tasks').values({ task: 'analytics-rollup' }).execute();

  await db.schema
    .createTable('analytics_identified')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('last_seen', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_identified_pk', ['organization_id', 'email'])
    .execute();
  await db.schema.createIndex('analytics_identified_recent_idx').on('analytics_identified').columns(['organization_id', 'last_seen']).execute();
  // Addresses given before this table existed.
  await db
    .insertInto('analytics_identified')
    .columns(['organization_id', 'email', 'last_seen'])
    .expression((eb) =>
      eb
        .selectFrom('analytics_events')
        .select(['organization_id', 'email', (e) => e.fn.max('created_at').as('last_seen')])
        .where('type', '=', 'identified_view')
        .groupBy(['organization_id', 'email']),
    )
    .execute();
  await db.schema.createIndex('analytics_events_created_idx').on('analytics_events').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('analytics_events_created_idx').execute();
  await db.schema.dropTable('analytics_identified').execute();
  await db.deleteFrom('housekeeping_tasks').where('task', '=', 'analytics-rollup').execute();
  await db.schema.dropTable('analytics_rollup').execute();
  await db.schema.dropTable('analytics_org_days').execute();
  await db.schema.dropTable('analytics_days').execute();
}
