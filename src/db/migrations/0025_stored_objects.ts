import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.ts';

/**
 * The keys of the objects in an S3 media store (docs/media.md, "Deleting by prefix"): a folder is
 * deleted from the keys recorded here, without listing the bucket. Keys compare bytewise (PostgreSQL's
 * "C" collation; SQLite's BINARY), so that a folder's keys are one range of the primary key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stored_objects')
    .addColumn('key', 'text', (c) =>
      isPostgres(db)
        ? c
            .notNull()
            .primaryKey()
            .modifyFront(sql`collate "C"`)
        : c.notNull().primaryKey(),
    )
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stored_objects').execute();
}
