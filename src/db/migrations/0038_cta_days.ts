import { sql, type Kysely } from 'kysely';
import { bigint, notNullDefault } from '../dialect.ts';

const DAY_MS = 86_400_000;

/**
 * A CTA's figures from daily rollups (docs/analytics.md, "A CTA's figures"): `analytics_cta_days`
 * keeps, per organization, CTA and UTC day, its impressions and clicks, added by the same rollup
 * batches as the players' days.
 *
 * Filled here from the stored reports the rollups have already read (up to
 * `analytics_rollup.last_event_id`; those above it are added by the next batches), so that every
 * retained report counts, as when a CTA's figures were read from its reports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const counter = notNullDefault(0);
  await db.schema
    .createTable('analytics_cta_days')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('event_id', 'integer', (c) => c.notNull())
    .addColumn('day', bigint, (c) => c.notNull())
    .addColumn('impressions', 'integer', counter)
    .addColumn('clicks', 'integer', counter)
    .addPrimaryKeyConstraint('analytics_cta_days_pk', ['organization_id', 'event_id', 'day'])
    .execute();
  const day = sql<number>`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;
  await db
    .insertInto('analytics_cta_days')
    .columns(['organization_id', 'event_id', 'day', 'impressions', 'clicks'])
    .expression((eb) =>
      eb
        .selectFrom('analytics_events')
        .select([
          'organization_id',
          'event_id',
          day.as('day'),
          sql<number>`sum(case when type = 'cta_impression' then 1 else 0 end)`.as('impressions'),
          sql<number>`sum(case when type = 'cta_click' then 1 else 0 end)`.as('clicks'),
        ])
        .where('event_id', 'is not', null)
        .where('type', 'in', ['cta_impression', 'cta_click'])
        .where('id', '<=', eb.selectFrom('analytics_rollup').select('last_event_id').where('analytics_rollup.id', '=', 1))
        .groupBy(['organization_id', 'event_id', day]),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_cta_days').execute();
}
