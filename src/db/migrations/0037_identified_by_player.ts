import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/**
 * A player's identified viewers, newest first, without reading the period's reports, as the
 * organization's (`analytics_identified`, migration 0027; docs/analytics.md, "Identified viewers"):
 * `analytics_identified_players` keeps, per player and address, when it was last given there
 * (written with the report). Filled from the stored reports, through the index of `email` (only
 * identified views carry one); an address whose reports are past ANALYTICS_RETENTION_DAYS has no row.
 *
 * A table of its own rather than a player column in `analytics_identified`: a process of an earlier
 * release still taking reports during a rolling upgrade keeps writing the organization's rows as it did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_identified_players')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('player_id', 'integer', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('last_seen', bigint, (c) => c.notNull())
    // The address before the player: a GDPR request finds an address's rows by (organization, email).
    .addPrimaryKeyConstraint('analytics_identified_players_pk', ['organization_id', 'email', 'player_id'])
    .execute();
  await db.schema
    .createIndex('analytics_identified_players_recent_idx')
    .on('analytics_identified_players')
    .columns(['organization_id', 'player_id', 'last_seen'])
    .execute();
  await db
    .insertInto('analytics_identified_players')
    .columns(['organization_id', 'player_id', 'email', 'last_seen'])
    .expression((eb) =>
      eb
        .selectFrom('analytics_events')
        .select(['organization_id', 'player_id', 'email', (e) => e.fn.max('created_at').as('last_seen')])
        .where('email', 'is not', null)
        .where('type', '=', 'identified_view')
        .groupBy(['organization_id', 'player_id', 'email']),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_identified_players').execute();
}
