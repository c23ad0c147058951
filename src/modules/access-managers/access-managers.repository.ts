import { sql, type Kysely, type Updateable } from 'kysely';
import type { AccessManagersTable, DB } from '../../db/schema.ts';

export class AccessManagersRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new AccessManagersRepository(db);
  }

  /**
   * Gives every player of the organization that has none its access manager (disabled, defaults).
   * Idempotent and safe under concurrency: players that already have one are skipped, and a
   * concurrent insert of the same player's row is absorbed by the unique player_id.
   */
  async ensureForOrganization(organizationId: number, now: number): Promise<void> {
    await this.db
      .insertInto('access_managers')
      .columns(['organization_id', 'player_id', 'created_at', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom('players')
          .select([
            'players.organization_id',
            'players.id',
            sql<number>`cast(${now} as bigint)`.as('created_at'),
            sql<number>`cast(${now} as bigint)`.as('updated_at'),
          ])
          .where('players.organization_id', '=', organizationId)
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('access_managers').select('access_managers.id').whereRef('access_managers.player_id', '=', 'players.id'))),
          ),
      )
      .onConflict((oc) => oc.column('player_id').doNothing())
      .execute();
  }

  /** Access managers with their player's UUID; a moderator who is no longer a user reads as null. */
  private selectWire() {
    return this.db
      .selectFrom('access_managers')
      .innerJoin('players', 'players.id', 'access_managers.player_id')
      .leftJoin('users', (join) =>
        join.onRef('users.id', '=', 'access_managers.moderator_id').onRef('users.organization_id', '=', 'access_managers.organization_id'),
      )
      .selectAll('access_managers')
      .select(['players.uuid as player_uuid', 'users.id as live_moderator_id']);
  }

  find(organizationId: number, id: number) {
    return this.selectWire().where('access_managers.organization_id', '=', organizationId).where('access_managers.id', '=', id).executeTakeFirst();
  }

  list(organizationId: number, opts: { limit: number; offset: number; playerId?: number }) {
    let q = this.selectWire().where('access_managers.organization_id', '=', organizationId);
    if (opts.playerId !== undefined) q = q.where('access_managers.player_id', '=', opts.playerId);
    return q.orderBy('access_managers.id').limit(opts.limit).offset(opts.offset).execute();
  }

  async count(organizationId: number, playerId?: number): Promise<number> {
    let q = this.db.selectFrom('access_managers').where('organization_id', '=', organizationId);
    if (playerId !== undefined) q = q.where('player_id', '=', playerId);
    const row = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(organizationId: number, id: number, changes: Updateable<AccessManagersTable>): Promise<boolean> {
    const r = await this.db.updateTable('access_managers').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async userExists(organizationId: number, userId: number): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('id').where('organization_id', '=', organizationId).where('id', '=', userId).executeTakeFirst();
    return row !== undefined;
  }
}

export type AccessManagerRow = NonNullable<Awaited<ReturnType<AccessManagersRepository['find']>>>;
