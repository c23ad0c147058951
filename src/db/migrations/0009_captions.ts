import { sql, type Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

/**
 * Captions of videos, stored as WebVTT. `status`: in_progress → complete | error, then draft /
 * published. `revision` grows with every new source so that a fetch job started for an older source
 * cannot overwrite a newer one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('captions'))
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('video_id', 'integer', (c) => c.notNull().references('videos.id').onDelete('cascade'))
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_default', 'boolean', notNullDefault(false))
    .addColumn('notes', 'text')
    // Where the content came from: 'upload' (sent in the body) or the URL it was fetched from.
    .addColumn('source_format', 'text')
    .addColumn('source_url', 'text')
    .addColumn('content', 'text')
    .addColumn('formatted_text', 'text')
    .addColumn('plain_text', 'text')
    .addColumn('cue_count', 'integer', notNullDefault(0))
    .addColumn('error_message', 'text')
    .addColumn('error_line', 'integer')
    .addColumn('revision', 'integer', notNullDefault(0))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('captions_video_idx').on('captions').columns(['video_id', 'id']).execute();
  await db.schema.createIndex('captions_org_idx').on('captions').columns(['organization_id', 'id']).execute();
  // At most one default caption per video, whatever races the service loses.
  await db.schema.createIndex('captions_one_default_idx').on('captions').column('video_id').unique().where(sql.ref('is_default'), '=', sql.lit(true)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('captions').execute();
}
