import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export class IdempotencyRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Claims the key; false when a row for it already exists. */
  async claim(organizationId: number, key: string, requestHash: string, now: number): Promise<boolean> {
    const result = await this.db
      .insertInto('idempotency_keys')
      .values({ organization_id: organizationId, key, request_hash: requestHash, state: 'running', created_at: now })
      .onConflict((oc) => oc.columns(['organization_id', 'key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  find(organizationId: number, key: string) {
    return this.db.selectFrom('idempotency_keys').selectAll().where('organization_id', '=', organizationId).where('key', '=', key).executeTakeFirst();
  }

  async removeIfCreatedBefore(organizationId: number, key: string, cutoff: number): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('organization_id', '=', organizationId)
      .where('key', '=', key)
      .where('created_at', '<', cutoff)
      .execute();
  }

  async release(organizationId: number, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('organization_id', '=', organizationId).where('key', '=', key).execute();
  }

  async complete(organizationId: number, key: string, status: number, body: string, type: string | null): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', response_status: status, response_body: body, response_type: type })
      .where('organization_id', '=', organizationId)
      .where('key', '=', key)
      .execute();
  }
}
