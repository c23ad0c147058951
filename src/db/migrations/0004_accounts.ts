import { sql, type Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

const cascade = (table: string) => (c: any) => c.notNull().references(`${table}.id`).onDelete('cascade');

/** Users, teams, allotments, IP ranges, access managers, GDPR requests, stakeholder mail. */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('users'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text', notNullDefault(''))
    .addColumn('last_name', 'text', notNullDefault(''))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', notNullDefault('invited'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('users_org_email_unique', ['organization_id', 'email'])
    .execute();

  await withId(db, db.schema.createTable('teams'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_admin', 'boolean', notNullDefault(false))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('teams_org_name_unique', ['organization_id', 'name'])
    .execute();

  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'integer', cascade('teams'))
    .addColumn('user_id', 'integer', cascade('users'))
    .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
    .execute();
  await db.schema.createIndex('team_members_user_idx').on('team_members').column('user_id').execute();

  await db.schema
    .createTable('allotment_limits')
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('limit', 'integer', (c) => c.notNull())
    .addColumn('grace_limit', 'integer', notNullDefault(0))
    .addColumn('enforced', 'boolean', notNullDefault(false))
    .addPrimaryKeyConstraint('allotment_limits_pk', ['organization_id', 'type'])
    .execute();

  await withId(db, db.schema.createTable('blacklisted_ip_ranges'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ip_range', 'text', (c) => c.notNull())
    // Both ends as fixed-width hex of the 16-byte (IPv4-mapped) address: "is this address blocked"
    // is one indexed range comparison that sorts the same on both dialects.
    .addColumn('range_start', 'text', (c) => c.notNull())
    .addColumn('range_end', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('blacklisted_ip_ranges_lookup_idx')
    .on('blacklisted_ip_ranges')
    .columns(['organization_id', 'range_start', 'range_end'])
    .execute();

  await withId(db, db.schema.createTable('access_managers'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('player_id', 'integer', (c) => c.notNull().unique().references('players.id').onDelete('cascade'))
    .addColumn('enabled', 'boolean', notNullDefault(false))
    .addColumn('moderator_id', 'integer')
    .addColumn('custom_sender_display_name', 'text')
    .addColumn('custom_approval_message', 'text')
    .addColumn('custom_denial_message', 'text')
    .addColumn('whitelisted_domains_enabled', 'boolean', notNullDefault(false))
    .addColumn('whitelisted_domains', 'text', notNullDefault('[]'))
    .addColumn('max_access_code_uses', 'integer')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('gdpr_requests'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('receipt_id', 'text', (c) => c.notNull().unique())
    .addColumn('request_action', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('webhook', 'text')
    .addColumn('new_values', 'text')
    .addColumn('status', 'text', notNullDefault('pending'))
    .addColumn('result', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('stakeholder_emails'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('recipients', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('player_id', 'integer')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stakeholder_emails_org_time_idx').on('stakeholder_emails').columns(['organization_id', 'created_at']).execute();

  // Every organization has exactly one admin team.
  await sql`insert into teams (organization_id, name, is_admin, created_at, updated_at)
            select id, 'Administrators', ${true}, created_at, created_at from organizations`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['stakeholder_emails', 'gdpr_requests', 'access_managers', 'blacklisted_ip_ranges', 'allotment_limits', 'team_members', 'teams', 'users']) {
    await db.schema.dropTable(t).execute();
  }
}
