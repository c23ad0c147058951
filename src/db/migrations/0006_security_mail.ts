import { sql, type Kysely } from 'kysely';
import { bigint, isPostgres, notNullDefault } from '../dialect.ts';

/**
 * Security and mail, on top of 0004: delivery state of stakeholder emails (the throttle counts what
 * was sent or is being sent, not what failed), an index for listing access managers, and byte-order
 * comparison of IP range keys whatever the PostgreSQL database's collation.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time. Rows from before were sent.
  await db.schema.alterTable('stakeholder_emails').addColumn('status', 'text', notNullDefault('sent')).execute();
  await db.schema.alterTable('stakeholder_emails').addColumn('sent_at', bigint).execute();
  await db.schema.alterTable('stakeholder_emails').addColumn('message_id', 'text').execute();
  await db.schema.alterTable('stakeholder_emails').addColumn('error', 'text').execute();
  await sql`update stakeholder_emails set sent_at = created_at`.execute(db);

  await db.schema.createIndex('access_managers_org_idx').on('access_managers').columns(['organization_id', 'id']).execute();

  // range_start/range_end hold 32 hex digits compared as text: make PostgreSQL compare them byte by
  // byte (SQLite's default BINARY collation already does). The lookup index is rebuilt with them.
  if (isPostgres(db)) {
    await sql`alter table blacklisted_ip_ranges alter column range_start type text collate "C", alter column range_end type text collate "C"`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table blacklisted_ip_ranges alter column range_start type text collate "default", alter column range_end type text collate "default"`.execute(
      db,
    );
  }
  await db.schema.dropIndex('access_managers_org_idx').execute();
  for (const column of ['error', 'message_id', 'sent_at', 'status']) {
    await db.schema.alterTable('stakeholder_emails').dropColumn(column).execute();
  }
}
