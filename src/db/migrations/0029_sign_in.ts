import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

const userCascade = (c: any) => c.notNull().references('users.id').onDelete('cascade');

/**
 * People sign in (docs/sign-in.md): a user's password hash, the single-use links mailed to them
 * (invitation, password reset) and their sessions. Links and sessions are stored by the SHA-256 of
 * their secret, as API tokens are: a copy of the database signs no one in.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('user_passwords')
    .addColumn('user_id', 'integer', (c) => userCascade(c).primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('user_links')
    .addColumn('token_hash', 'text', (c) => c.notNull().primaryKey())
    .addColumn('user_id', 'integer', userCascade)
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_links_user_idx').on('user_links').columns(['user_id', 'purpose']).execute();
  await db.schema.createIndex('user_links_expiry_idx').on('user_links').column('expires_at').execute();

  await db.schema
    .createTable('user_sessions')
    .addColumn('id_hash', 'text', (c) => c.notNull().primaryKey())
    .addColumn('user_id', 'integer', userCascade)
    // The role the user had when signing in: a session of a user whose role changed since is over.
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_sessions_user_idx').on('user_sessions').column('user_id').execute();
  await db.schema.createIndex('user_sessions_expiry_idx').on('user_sessions').column('expires_at').execute();

  // Sign-in looks a person up by address across organizations.
  await db.schema.createIndex('users_email_idx').on('users').column('email').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_email_idx').execute();
  await db.schema.dropTable('user_sessions').execute();
  await db.schema.dropTable('user_links').execute();
  await db.schema.dropTable('user_passwords').execute();
}
