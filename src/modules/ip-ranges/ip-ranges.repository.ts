import type { Insertable, Kysely, Selectable } from 'kysely';
import { cachedRead } from '../../db/read-cache.ts';
import type { BlacklistedIpRangesTable, DB } from '../../db/schema.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';

export type IpRangeRow = Selectable<BlacklistedIpRangesTable>;

export class IpRangesRepository {
  constructor(private readonly db: Kysely<DB>) {}

  insert(row: Insertable<BlacklistedIpRangesTable>): Promise<IpRangeRow> {
    return this.db.insertInto('blacklisted_ip_ranges').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<IpRangeRow | undefined> {
    return this.db.selectFrom('blacklisted_ip_ranges').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  list(organizationId: number, opts: { limit: number; offset: number }): Promise<IpRangeRow[]> {
    return this.db
      .selectFrom('blacklisted_ip_ranges')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('id')
      .limit(opts.limit)
      .offset(opts.offset)
      .execute();
  }

  async count(organizationId: number): Promise<number> {
    const row = await this.db
      .selectFrom('blacklisted_ip_ranges')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(organizationId: number, id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('blacklisted_ip_ranges').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Whether the organization has any range: asked by every page, beacon and media request, so cached. */
  hasAny(organizationId: number): MaybePromise<boolean> {
    const found = cachedRead(
      this.db,
      'ip-ranges-any',
      organizationId,
      async (db) => ({
        any:
          (await db.selectFrom('blacklisted_ip_ranges').select('id').where('organization_id', '=', organizationId).limit(1).executeTakeFirst()) !== undefined,
      }),
      () => organizationId,
    );
    return mapMaybe(found, (f) => f!.any);
  }

  /**
   * The first range of the organization containing the address key (32 hex digits): one query on the
   * index (organization_id, range_start, range_end).
   */
  findCovering(organizationId: number, key: string): Promise<{ id: number } | undefined> {
    return this.db
      .selectFrom('blacklisted_ip_ranges')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('range_start', '<=', key)
      .where('range_end', '>=', key)
      .limit(1)
      .executeTakeFirst();
  }
}
