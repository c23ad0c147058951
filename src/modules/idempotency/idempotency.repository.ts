import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export class IdempotencyRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Claims the key until `lockedUntil`; false when a row for it already exists. */
  async claim(organizationId: number, key: string, requestHash: string, now: number, lockedUntil: number): Promise<boolean> {
    const result = await this.db
      .insertInto('idempotency_keys')
      .values({ organization_id: organizationId, key, request_hash: requestHash, state: 'running', created_at: now, locked_until: lockedUntil })
      .onConflict((oc) => oc.columns(['organization_id', 'key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * Takes over a running key of the same request whose lease ran out (its request died, or outlived
   * the lease): false when the key is done, still leased, or taken over by another request first. A row
   * without a lease counts as expired.
   */
  async takeOver(organizationId: number, key: string, requestHash: string, now: number, lockedUntil: number): Promise<boolean> {
    const result = await this.db
      .updateTable('idempotency_keys')
      .set({ created_at: now, locked_until: lockedUntil })
      .where('organization_id', '=', organizationId)
      .where('key', '=', key)
      .where('request_hash', '=', requestHash)
      .where('state', '=', 'running')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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

  /** Frees a running key, if the claim `lockedUntil` still holds it. */
  async release(organizationId: number, key: string, lockedUntil: number): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('organization_id', '=', organizationId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .where('locked_until', '=', lockedUntil)
      .execute();
  }

  /** Stores the answer of a running key, if the claim `lockedUntil` still holds it. */
  async complete(organizationId: number, key: string, lockedUntil: number, status: number, body: string, type: string | null): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', response_status: status, response_body: body, response_type: type })
      .where('organization_id', '=', organizationId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .where('locked_until', '=', lockedUntil)
      .execute();
  }
}
