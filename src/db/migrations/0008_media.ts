import { sql, type Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

const cascade = (table: string) => (c: any) => c.notNull().references(`${table}.id`).onDelete('cascade');

/**
 * Media processing (docs/media.md): a source version per video (a changed upload_url starts a new
 * one, and only the job of the current version may publish), source dimensions, rendition details,
 * thumbnails, and custom file sets.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('videos').addColumn('media_version', 'integer', notNullDefault(0)).execute();
  await db.schema.alterTable('videos').addColumn('width', 'integer').execute();
  await db.schema.alterTable('videos').addColumn('height', 'integer').execute();

  await db.schema.alterTable('video_files').addColumn('width', 'integer').execute();
  await db.schema.alterTable('video_files').addColumn('height', 'integer').execute();
  await db.schema.alterTable('video_files').addColumn('bytes', bigint).execute();
  await db.schema.alterTable('video_files').addColumn('content_type', 'text').execute();

  await withId(db, db.schema.createTable('thumbnails'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('video_id', 'integer', cascade('videos'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    // 'generated' (taken from the video by processing) or 'custom' (set by URL).
    .addColumn('kind', 'text', (c) => c.notNull())
    // A file-store key (served by signed URL), or an external URL for a custom thumbnail not copied.
    .addColumn('path', 'text')
    .addColumn('url', 'text')
    .addColumn('millisecond', 'integer')
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('selected', 'boolean', notNullDefault(false))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('thumbnails_video_idx').on('thumbnails').columns(['video_id', 'id']).execute();
  await db.schema.createIndex('thumbnails_org_idx').on('thumbnails').columns(['organization_id', 'id']).execute();
  // At most one selected thumbnail per video.
  await sql`create unique index thumbnails_one_selected_idx on thumbnails (video_id) where selected`.execute(db);

  await withId(db, db.schema.createTable('video_file_sets'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('video_id', 'integer', cascade('videos'))
    .addColumn('custom_identifier', 'text', (c) => c.notNull())
    .addColumn('sd_url', 'text')
    .addColumn('hd_url', 'text')
    .addColumn('status', 'text', notNullDefault('processing'))
    .addColumn('error_message', 'text')
    .addColumn('version', 'integer', notNullDefault(0))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('video_file_sets_video_identifier_unique', ['video_id', 'custom_identifier'])
    .execute();

  // Videos created before media processing existed are processed now.
  const pending = await db.selectFrom('videos').select('id').where('status', 'is', null).where('upload_url', 'is not', null).execute();
  const now = Date.now();
  for (const { id } of pending as Array<{ id: number }>) {
    await db
      .insertInto('jobs')
      .values({
        type: 'video.process',
        payload: JSON.stringify({ videoId: Number(id), version: 0 }),
        max_attempts: 5,
        run_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index thumbnails_one_selected_idx`.execute(db);
  await db.schema.dropTable('video_file_sets').execute();
  await db.schema.dropTable('thumbnails').execute();
  for (const column of ['content_type', 'bytes', 'height', 'width']) await db.schema.alterTable('video_files').dropColumn(column).execute();
  for (const column of ['height', 'width', 'media_version']) await db.schema.alterTable('videos').dropColumn(column).execute();
}
