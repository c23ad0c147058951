import type { Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

const cascade = (table: string) => (c: any) => c.notNull().references(`${table}.id`).onDelete('cascade');

/**
 * Live streams (docs/live.md): a stream holds the ingest credentials (shared by the instances of a
 * recurring stream); each instance is one broadcast with its own player and video.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('live_streams'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('recurring', 'boolean', notNullDefault(false))
    .addColumn('stream_key', 'text', (c) => c.notNull().unique())
    .addColumn('backup_key', 'text', (c) => c.unique())
    .addColumn('has_redundant_streams', 'boolean', notNullDefault(false))
    // Set when the stream's current instance is deleted: the keys stop working.
    .addColumn('deleted_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('live_stream_instances'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('stream_id', 'integer', cascade('live_streams'))
    // The player and video may be deleted through their own API; the instance stays.
    .addColumn('player_id', 'integer', (c) => c.references('players.id').onDelete('set null'))
    .addColumn('video_id', 'integer', (c) => c.references('videos.id').onDelete('set null'))
    // The HLS output lives under DATA_DIR/live/<player_uuid>/ and is served at /live/<player_uuid>/.
    .addColumn('player_uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', notNullDefault(''))
    // JSON: array of arrays of strings; search_text: the name and tag parts, lower case, for `query`.
    .addColumn('tags', 'text', notNullDefault('[]'))
    .addColumn('search_text', 'text', notNullDefault(''))
    .addColumn('status', 'text', notNullDefault('unaired'))
    .addColumn('segment_length', 'integer', notNullDefault(4))
    .addColumn('dvr_enabled', 'boolean', notNullDefault(false))
    .addColumn('disable_notifications', 'boolean', notNullDefault(false))
    .addColumn('email', 'text')
    .addColumn('air_date', bigint)
    .addColumn('start_time', bigint)
    .addColumn('end_time', bigint)
    .addColumn('vod_created_at', bigint)
    // Ingest bookkeeping: which ingest session holds the broadcast, its heartbeat (ms), the feeds'
    // sessions and their last health samples (JSON).
    .addColumn('ingest_session', 'text')
    .addColumn('ingest_heartbeat_at', bigint)
    .addColumn('primary_session', 'text')
    .addColumn('backup_session', 'text')
    .addColumn('health_primary', 'text')
    .addColumn('health_backup', 'text')
    .addColumn('health_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('live_instances_org_idx').on('live_stream_instances').columns(['organization_id', 'id']).execute();
  await db.schema.createIndex('live_instances_stream_idx').on('live_stream_instances').columns(['stream_id', 'id']).execute();
  await db.schema.createIndex('live_instances_status_idx').on('live_stream_instances').columns(['status', 'ingest_heartbeat_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('live_stream_instances').execute();
  await db.schema.dropTable('live_streams').execute();
}
