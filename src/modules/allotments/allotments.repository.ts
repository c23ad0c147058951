import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { AllotmentType } from './allotments.schemas.ts';

export interface LimitRow {
  type: string;
  limit: number;
  grace_limit: number;
  enforced: boolean | number;
}

export class AllotmentsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new AllotmentsRepository(db);
  }

  limits(organizationId: number): Promise<LimitRow[]> {
    return this.db.selectFrom('allotment_limits').select(['type', 'limit', 'grace_limit', 'enforced']).where('organization_id', '=', organizationId).execute();
  }

  limit(organizationId: number, type: AllotmentType): Promise<LimitRow | undefined> {
    return this.db
      .selectFrom('allotment_limits')
      .select(['type', 'limit', 'grace_limit', 'enforced'])
      .where('organization_id', '=', organizationId)
      .where('type', '=', type)
      .executeTakeFirst();
  }

  async upsert(organizationId: number, type: AllotmentType, values: { limit: number; grace_limit: number; enforced: boolean }): Promise<void> {
    await this.db
      .insertInto('allotment_limits')
      .values({ organization_id: organizationId, type, ...values })
      .onConflict((oc) => oc.columns(['organization_id', 'type']).doUpdateSet(values))
      .execute();
  }

  /** What the allotment counts now. */
  async usage(organizationId: number, type: AllotmentType): Promise<number> {
    let row: { n: number | string | bigint } | undefined;
    if (type === 'govideo_users') {
      row = await this.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
    } else if (type === 'teams') {
      row = await this.db
        .selectFrom('teams')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
    } else {
      row = await this.db
        .selectFrom('players')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', organizationId)
        .where('embed_enabled', '=', true)
        .executeTakeFirst();
    }
    return Number(row?.n ?? 0);
  }
}

/** The few player queries the embed operations need (scoped by organization). */
export class EmbedsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new EmbedsRepository(db);
  }

  findPlayer(organizationId: number, uuid: string) {
    return this.db
      .selectFrom('players')
      .select(['id', 'embed_enabled'])
      .where('organization_id', '=', organizationId)
      .where('uuid', '=', uuid)
      .executeTakeFirst();
  }

  async setEmbedEnabled(organizationId: number, playerId: number, enabled: boolean, now: number): Promise<void> {
    await this.db
      .updateTable('players')
      .set({ embed_enabled: enabled, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', playerId)
      .execute();
  }
}
