import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, WebhooksTable } from '../../db/schema.ts';

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

  async count(organizationId: number, kind: string): Promise<number> {
    const row = await this.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', organizationId).where('kind', '=', kind).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  find(id: number): Promise<WebhookRow | undefined> {
    return this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  delete(organizationId: number, kind: string, id: number): Promise<WebhookRow | undefined> {
    return this.db.deleteFrom('webhooks').where('id', '=', id).where('organization_id', '=', organizationId).where('kind', '=', kind).returningAll().executeTakeFirst();
  }

  organization(organizationId: number) {
    return this.db.selectFrom('organizations').select(['id', 'name', 'account_id']).where('id', '=', organizationId).executeTakeFirst();
  }
}
