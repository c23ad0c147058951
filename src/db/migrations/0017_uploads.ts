import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/**
 * Direct uploads (docs/uploads.md): one row per tus capability. `secret_hash` is the SHA-256 of the
 * URL's secret (the secret itself is never stored); `size` and `received` follow the tus upload;
 * `status` is pending → complete (bytes in the upload store) → stored (the original moved into the
 * media store), or expired.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('video_id', 'integer', (c) => c.references('videos.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('size', bigint)
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('completed_at', 'integer')
    .execute();
  await db.schema.createIndex('uploads_video_idx').on('uploads').column('video_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('uploads').execute();
}
