import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DB, LiveStreamInstancesTable, LiveStreamsTable } from '../../db/schema.ts';
import { matchesText, type SearchedTable } from '../../db/text-search.ts';
import { nearerEnd } from '../../db/paging.ts';

/** What the live list's `query` reads (migration 0023): the name and tags, lower case. */
const LIVE_SEARCH: SearchedTable = { table: 'i', fts: 'live_instances_search', columns: ['search_text'] };

export type LiveStreamRow = Selectable<LiveStreamsTable>;
export type LiveInstanceRow = Selectable<LiveStreamInstancesTable>;
export type FeedRole = 'primary' | 'backup';

export interface LiveListFilter {
  statuses?: string[];
  query?: string;
}

export interface LiveListOrder {
  column: 'id' | 'created_at' | 'updated_at' | 'air_date' | 'start_time';
  direction: 'asc' | 'desc';
}

/** Only queries. API reads and writes are scoped by organization; the ingest and jobs go by id or key. */
export class LiveRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new LiveRepository(db);
  }

  async organizationFeatures(id: number): Promise<string | null> {
    const row = await this.db.selectFrom('organizations').select('features').where('id', '=', id).executeTakeFirst();
    return row ? row.features : null;
  }

  async userEmail(organizationId: number, userId: number): Promise<string | null> {
    const row = await this.db.selectFrom('users').select('email').where('organization_id', '=', organizationId).where('id', '=', userId).executeTakeFirst();
    return row?.email ?? null;
  }

  /** Addresses of the organization's admins and owners. */
  async adminEmails(organizationId: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('users')
      .select('email')
      .where('organization_id', '=', organizationId)
      .where('role', 'in', ['admin', 'owner'])
      .orderBy('id')
      .execute();
    return rows.map((r) => r.email);
  }

  insertStream(row: Insertable<LiveStreamsTable>): Promise<LiveStreamRow> {
    return this.db.insertInto('live_streams').values(row).returningAll().executeTakeFirstOrThrow();
  }

  insertInstance(row: Insertable<LiveStreamInstancesTable>): Promise<LiveInstanceRow> {
    return this.db.insertInto('live_stream_instances').values(row).returningAll().executeTakeFirstOrThrow();
  }

  findStream(id: number): Promise<LiveStreamRow | undefined> {
    return this.db.selectFrom('live_streams').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findStreams(ids: number[]): Promise<LiveStreamRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('live_streams').selectAll().where('id', 'in', ids).execute();
  }

  /** A stream whose primary (or backup) key this is, when not deleted. */
  findStreamByKey(role: FeedRole, key: string): Promise<LiveStreamRow | undefined> {
    return this.db
      .selectFrom('live_streams')
      .selectAll()
      .where(role === 'primary' ? 'stream_key' : 'backup_key', '=', key)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  async softDeleteStream(id: number, now: number): Promise<void> {
    await this.db.updateTable('live_streams').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
  }

  find(organizationId: number, id: number): Promise<LiveInstanceRow | undefined> {
    return this.db.selectFrom('live_stream_instances').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  findById(id: number): Promise<LiveInstanceRow | undefined> {
    return this.db.selectFrom('live_stream_instances').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByPlayerUuid(uuid: string): Promise<LiveInstanceRow | undefined> {
    return this.db.selectFrom('live_stream_instances').selectAll().where('player_uuid', '=', uuid).executeTakeFirst();
  }

  /** The stream's newest instance: the one its key publishes to. */
  latestOfStream(streamId: number): Promise<LiveInstanceRow | undefined> {
    return this.db.selectFrom('live_stream_instances').selectAll().where('stream_id', '=', streamId).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  private filtered(organizationId: number, filter: LiveListFilter) {
    let q = this.db.selectFrom('live_stream_instances as i').where('i.organization_id', '=', organizationId);
    if (filter.statuses?.length) q = q.where('i.status', 'in', filter.statuses);
    if (filter.query) q = q.where((eb) => matchesText(this.db, eb, LIVE_SEARCH, filter.query!));
    return q;
  }

  /**
   * One page in the order asked. With `total` known, a page in the later half is read in the
   * opposite order from the end and turned round (the last of 100,000 no longer walks them all).
   */
  async list(organizationId: number, filter: LiveListFilter, order: LiveListOrder, page: { limit: number; offset: number }, total?: number) {
    const read = nearerEnd(page, total);
    if (!read) return [];
    const direction = read.reversed ? (order.direction === 'asc' ? 'desc' : 'asc') : order.direction;
    let q = this.filtered(organizationId, filter).innerJoin('live_streams as s', 's.id', 'i.stream_id').selectAll('i').select('s.recurring as recurring');
    // Unset times order as 0 (as answered) on both dialects.
    q =
      order.column === 'id' ? q.orderBy('i.id', direction) : q.orderBy(sql`coalesce(${sql.ref(`i.${order.column}`)}, 0)`, direction).orderBy('i.id', direction);
    const rows = await q.limit(read.limit).offset(read.offset).execute();
    return read.reversed ? rows.reverse() : rows;
  }

  async count(organizationId: number, filter: LiveListFilter): Promise<number> {
    const row = await this.filtered(organizationId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  update(organizationId: number, id: number, changes: Updateable<LiveStreamInstancesTable>): Promise<LiveInstanceRow | undefined> {
    return this.db
      .updateTable('live_stream_instances')
      .set(changes)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('live_stream_instances').where('id', '=', id).execute();
  }

  // ---- ingest state (conditional updates: the WHERE clause is the rule) ----

  /** unaired → live; undefined when the instance was not unaired any more. */
  goLive(id: number, changes: Updateable<LiveStreamInstancesTable>): Promise<LiveInstanceRow | undefined> {
    return this.db.updateTable('live_stream_instances').set(changes).where('id', '=', id).where('status', '=', 'unaired').returningAll().executeTakeFirst();
  }

  /** A live instance taken (or kept) by an ingest session. */
  continueLive(id: number, changes: Updateable<LiveStreamInstancesTable>): Promise<LiveInstanceRow | undefined> {
    return this.db.updateTable('live_stream_instances').set(changes).where('id', '=', id).where('status', '=', 'live').returningAll().executeTakeFirst();
  }

  /**
   * The holder's heartbeat: only while this session holds the live instance and its stream is not
   * deleted. False when the broadcast was lost (deleted, revoked, taken over).
   */
  async heartbeat(id: number, session: string, changes: Updateable<LiveStreamInstancesTable>): Promise<boolean> {
    const r = await this.db
      .updateTable('live_stream_instances')
      .set(changes)
      .where('id', '=', id)
      .where('status', '=', 'live')
      .where('ingest_session', '=', session)
      .where((eb) =>
        eb.exists(eb.selectFrom('live_streams as s').select('s.id').whereRef('s.id', '=', 'live_stream_instances.stream_id').where('s.deleted_at', 'is', null)),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async releaseFeed(id: number, role: FeedRole, feedSession: string): Promise<void> {
    const q = this.db.updateTable('live_stream_instances').where('id', '=', id);
    if (role === 'primary') await q.set({ primary_session: null, health_primary: null }).where('primary_session', '=', feedSession).execute();
    else await q.set({ backup_session: null, health_backup: null }).where('backup_session', '=', feedSession).execute();
  }

  /** live → processing, by the session holding it; undefined when it no longer does. */
  endLive(id: number, session: string, changes: Updateable<LiveStreamInstancesTable>): Promise<LiveInstanceRow | undefined> {
    return this.db
      .updateTable('live_stream_instances')
      .set(changes)
      .where('id', '=', id)
      .where('status', '=', 'live')
      .where('ingest_session', '=', session)
      .returningAll()
      .executeTakeFirst();
  }

  /** Live instances whose ingest stopped beating before `before` (ms): their holder died. */
  staleLive(before: number): Promise<LiveInstanceRow[]> {
    return this.db
      .selectFrom('live_stream_instances')
      .selectAll()
      .where('status', '=', 'live')
      .where((eb) => eb.or([eb('ingest_heartbeat_at', 'is', null), eb('ingest_heartbeat_at', '<', before)]))
      .orderBy('id')
      .limit(100)
      .execute();
  }

  endStale(id: number, before: number, changes: Updateable<LiveStreamInstancesTable>): Promise<LiveInstanceRow | undefined> {
    return this.db
      .updateTable('live_stream_instances')
      .set(changes)
      .where('id', '=', id)
      .where('status', '=', 'live')
      .where((eb) => eb.or([eb('ingest_heartbeat_at', 'is', null), eb('ingest_heartbeat_at', '<', before)]))
      .returningAll()
      .executeTakeFirst();
  }

  /** processing → ready; vod_created_at only when the recording became the video. */
  markReady(id: number, now: number, recorded: boolean): Promise<LiveInstanceRow | undefined> {
    return this.db
      .updateTable('live_stream_instances')
      .set({ status: 'ready', vod_created_at: recorded ? now : null, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'processing')
      .returningAll()
      .executeTakeFirst();
  }
}
