import type { Kysely } from 'kysely';
import { double, withId } from '../dialect.ts';

/**
 * Viewers' reports, kept (docs/analytics.md): one row per report the player sends (a load, a view
 * milestone, what was watched of a chapter, a CTA shown or clicked, an identified view), with the
 * pseudonymous visitor, the viewing session (the player load) and coarse client facts. `dedup_key`
 * makes a replayed or repeated beacon a no-op.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('analytics_events'))
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('player_id', 'integer', (c) => c.notNull())
    .addColumn('video_id', 'integer')
    .addColumn('chapter', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('percent', 'integer')
    .addColumn('event_id', 'integer')
    .addColumn('watched_seconds', double(db))
    .addColumn('watched', 'text')
    .addColumn('buckets', 'text')
    .addColumn('email', 'text')
    .addColumn('visitor_id', 'text')
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('origin', 'text')
    .addColumn('device', 'text', (c) => c.notNull())
    .addColumn('browser', 'text', (c) => c.notNull())
    .addColumn('country', 'text')
    .addColumn('dedup_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('analytics_events_player_idx').on('analytics_events').columns(['organization_id', 'player_id', 'created_at']).execute();
  await db.schema.createIndex('analytics_events_email_idx').on('analytics_events').columns(['email']).execute();
  await db.schema.createIndex('analytics_events_video_idx').on('analytics_events').columns(['organization_id', 'video_id', 'created_at']).execute();
  await db.schema.createIndex('analytics_events_cta_idx').on('analytics_events').columns(['organization_id', 'event_id']).execute();
  await db.schema.createIndex('analytics_events_session_idx').on('analytics_events').columns(['session_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_events').execute();
}
