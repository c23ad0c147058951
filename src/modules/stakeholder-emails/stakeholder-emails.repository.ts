import type { Insertable, Kysely } from 'kysely';
import type { DB, StakeholderEmailsTable } from '../../db/schema.ts';

export class StakeholderEmailsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new StakeholderEmailsRepository(db);
  }

  /**
   * Creation times, oldest first, of the emails sent or being sent after `since`: what the throttle
   * counts (a failed delivery does not count). One range scan of (organization_id, created_at).
   */
  async countedSince(organizationId: number, since: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('stakeholder_emails')
      .select('created_at')
      .where('organization_id', '=', organizationId)
      .where('created_at', '>', since)
      .where('status', '<>', 'failed')
      .orderBy('created_at')
      .execute();
    return rows.map((r) => Number(r.created_at));
  }

  insert(row: Insertable<StakeholderEmailsTable>) {
    return this.db.insertInto('stakeholder_emails').values(row).returning('id').executeTakeFirstOrThrow();
  }

  async markSent(id: number, sentAt: number, messageId: string): Promise<void> {
    await this.db.updateTable('stakeholder_emails').set({ status: 'sent', sent_at: sentAt, message_id: messageId, error: null }).where('id', '=', id).execute();
  }

  /** A failed attempt: the email stays `sending` (the queue tries again). An email sent meanwhile is left as it is. */
  async noteError(id: number, error: string): Promise<void> {
    await this.db
      .updateTable('stakeholder_emails')
      .set({ error: error.slice(0, 1000) })
      .where('id', '=', id)
      .where('status', '=', 'sending')
      .execute();
  }

  async status(id: number): Promise<string | undefined> {
    return (await this.db.selectFrom('stakeholder_emails').select('status').where('id', '=', id).executeTakeFirst())?.status;
  }

  async markFailed(id: number, error: string): Promise<void> {
    await this.db
      .updateTable('stakeholder_emails')
      .set({ status: 'failed', error: error.slice(0, 1000) })
      .where('id', '=', id)
      .execute();
  }

  findPlayerById(organizationId: number, id: number) {
    return this.db.selectFrom('players').select(['id', 'uuid', 'name']).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  findPlayerByUuid(organizationId: number, uuid: string) {
    return this.db
      .selectFrom('players')
      .select(['id', 'uuid', 'name'])
      .where('organization_id', '=', organizationId)
      .where('uuid', '=', uuid)
      .executeTakeFirst();
  }

  async userEmail(organizationId: number, userId: number): Promise<string | null> {
    const row = await this.db.selectFrom('users').select('email').where('organization_id', '=', organizationId).where('id', '=', userId).executeTakeFirst();
    return row?.email ?? null;
  }
}
