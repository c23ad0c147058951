import type { Insertable, Kysely, Selectable } from 'kysely';
import { cachedRead } from '../../db/read-cache.ts';
import type { DB, WebhooksTable } from '../../db/schema.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';

export type WebhookRow = Selectable<WebhooksTable>;

export class WebhooksRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new WebhooksRepository(db);
  }

  insert(row: Insertable<WebhooksTable>): Promise<WebhookRow> {
    return this.db.insertInto('webhooks').values(row).returningAll().executeTakeFirstOrThrow();
  }

  list(organizationId: number, kind: string): Promise<WebhookRow[]> {
    return this.db.selectFrom('webhooks').selectAll().where('organization_id', '=', organizationId).where('kind', '=', kind).orderBy('id').execute();
  }

  /** The event subscriptions (as stored) of the organization's webhooks of `kind`: asked for every viewer report, so cached. */
  subscriptions(organizationId: number, kind: string): MaybePromise<string[]> {
    const found = cachedRead(
      this.db,
      'webhook-subscriptions',
      `${organizationId}:${kind}`,
      async (db) => ({
        lists: (
          await db.selectFrom('webhooks').select('event_subscriptions').where('organization_id', '=', organizationId).where('kind', '=', kind).execute()
        ).map((r) => r.event_subscriptions),
      }),
      () => organizationId,
    );
    return mapMaybe(found, (f) => f!.lists);
  }

  async addDelivery(jobId: number, webhookId: number, event: string, createdAt: number): Promise<void> {
    await this.db.insertInto('webhook_deliveries').values({ job_id: jobId, webhook_id: webhookId, event, created_at: createdAt }).execute();
  }

  /** The webhook's `limit` latest deliveries with their job's state, newest first (kept as long as their jobs). */
  deliveries(webhookId: number, limit: number) {
    return this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('jobs', 'jobs.id', 'webhook_deliveries.job_id')
      .select([
        'webhook_deliveries.job_id',
        'webhook_deliveries.event',
        'webhook_deliveries.created_at',
        'jobs.status',
        'jobs.attempts',
        'jobs.max_attempts',
        'jobs.last_error',
        'jobs.run_at',
        'jobs.updated_at',
      ])
      .where('webhook_deliveries.webhook_id', '=', webhookId)
      .orderBy('webhook_deliveries.job_id', 'desc')
      .limit(limit)
      .execute();
  }

  /** One webhook of the organization and kind, or undefined. */
  findOwn(organizationId: number, kind: string, id: number): Promise<WebhookRow | undefined> {
    return this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async count(organizationId: number, kind: string): Promise<number> {
    const row = await this.db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(id: number): Promise<WebhookRow | undefined> {
    return this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  delete(organizationId: number, kind: string, id: number): Promise<WebhookRow | undefined> {
    return this.db
      .deleteFrom('webhooks')
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .returningAll()
      .executeTakeFirst();
  }

  async signingKey(organizationId: number): Promise<string | null> {
    const row = await this.db.selectFrom('organizations').select('webhook_signing_key').where('id', '=', organizationId).executeTakeFirst();
    return row?.webhook_signing_key ?? null;
  }

  /** Sets the key unless one is set already (`replace`: whatever is set); answers the key now set, or null for no organization. */
  async setSigningKey(organizationId: number, key: string, replace: boolean): Promise<string | null> {
    let q = this.db.updateTable('organizations').set({ webhook_signing_key: key }).where('id', '=', organizationId);
    if (!replace) q = q.where('webhook_signing_key', 'is', null);
    await q.execute();
    return this.signingKey(organizationId);
  }

  async videoOrganization(videoId: number): Promise<number | undefined> {
    return (await this.db.selectFrom('videos').select('organization_id').where('id', '=', videoId).executeTakeFirst())?.organization_id;
  }

  organization(organizationId: number) {
    return this.db.selectFrom('organizations').select(['id', 'name', 'account_id']).where('id', '=', organizationId).executeTakeFirst();
  }
}
