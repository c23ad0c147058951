import type { Insertable, Kysely } from 'kysely';
import type { DB, UserLinksTable, UserSessionsTable } from '../../db/schema.ts';

export type LinkPurpose = 'invite' | 'reset';

/** Users, their passwords, links and sessions: the queries of signing in. */
export class SessionsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new SessionsRepository(db);
  }

  /** Every user with this (lower-case) address, in any organization, with their password hash if any; by id. */
  usersByEmail(email: string) {
    return this.db
      .selectFrom('users')
      .leftJoin('user_passwords', 'user_passwords.user_id', 'users.id')
      .select(['users.id', 'users.organization_id', 'users.email', 'users.role', 'users.status', 'user_passwords.hash'])
      .where('users.email', '=', email)
      .orderBy('users.id')
      .execute();
  }

  user(id: number) {
    return this.db
      .selectFrom('users')
      .innerJoin('organizations', 'organizations.id', 'users.organization_id')
      .select([
        'users.id',
        'users.organization_id',
        'users.email',
        'users.first_name',
        'users.last_name',
        'users.role',
        'users.status',
        'organizations.name as organization_name',
      ])
      .where('users.id', '=', id)
      .executeTakeFirst();
  }

  async hasPassword(userId: number): Promise<boolean> {
    return !!(await this.db.selectFrom('user_passwords').select('user_id').where('user_id', '=', userId).executeTakeFirst());
  }

  async setPassword(userId: number, hash: string, now: number): Promise<void> {
    await this.db
      .insertInto('user_passwords')
      .values({ user_id: userId, hash, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ hash, updated_at: now }))
      .execute();
  }

  async activate(userId: number, names: { first_name?: string; last_name?: string }, now: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ status: 'active', updated_at: now, ...names })
      .where('id', '=', userId)
      .execute();
  }

  async insertLink(row: Insertable<UserLinksTable>): Promise<void> {
    await this.db.insertInto('user_links').values(row).execute();
  }

  /** A link that has not expired at `now`, with its user. */
  link(tokenHash: string, now: number) {
    return this.db.selectFrom('user_links').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
  }

  /** Deletes a link that has not expired at `now`; answers whether it was there (a link is spent once). */
  async spendLink(tokenHash: string, now: number): Promise<boolean> {
    const r = await this.db.deleteFrom('user_links').where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** Removes a user's links of a purpose (a new one replaces them; a used one is spent); answers how many. */
  async deleteLinks(userId: number, purpose: LinkPurpose): Promise<number> {
    const r = await this.db.deleteFrom('user_links').where('user_id', '=', userId).where('purpose', '=', purpose).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async insertSession(row: Insertable<UserSessionsTable>): Promise<void> {
    await this.db.insertInto('user_sessions').values(row).execute();
  }

  /** A session that has not expired at `now`, with its user as the user is now (absent once removed). */
  session(idHash: string, now: number) {
    return this.db
      .selectFrom('user_sessions')
      .innerJoin('users', 'users.id', 'user_sessions.user_id')
      .select([
        'user_sessions.user_id',
        'user_sessions.role as session_role',
        'user_sessions.csrf_token',
        'user_sessions.expires_at',
        'users.role as user_role',
        'users.organization_id',
      ])
      .where('user_sessions.id_hash', '=', idHash)
      .where('user_sessions.expires_at', '>', now)
      .executeTakeFirst();
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.deleteFrom('user_sessions').where('id_hash', '=', idHash).execute();
  }

  /** Ends every session of a user (a role change, a new password); answers how many. */
  async deleteSessionsOf(userId: number): Promise<number> {
    const r = await this.db.deleteFrom('user_sessions').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
