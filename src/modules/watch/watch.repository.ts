import type { Kysely, Selectable } from 'kysely';
import { cachedRead } from '../../db/read-cache.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';
import type { AccessManagersTable, DB, PlayersTable } from '../../db/schema.ts';

export type WatchPlayerRow = Selectable<PlayersTable> & { organization_name: string };
export type WatchAccessRow = Pick<
  Selectable<AccessManagersTable>,
  | 'id'
  | 'enabled'
  | 'custom_approval_message'
  | 'custom_denial_message'
  | 'whitelisted_domains_enabled'
  | 'whitelisted_domains'
  | 'max_access_code_uses'
  | 'access_code_uses'
>;

type PlayerRef = { id: number; organization_id: number };

/** The queries of the public pages: players are found by UUID alone, whatever their organization. */
export class WatchRepository {
  constructor(private readonly db: Kysely<DB>) {}

  // Every page, beacon and media request starts here: cached until the database changes (src/db/read-cache.ts).
  // The player is found by its unique UUID, so only its own organization's writes can change the answer
  // (and any write to the organizations table, which says nobody's rows).
  findPlayer(uuid: string): MaybePromise<WatchPlayerRow | undefined> {
    return cachedRead(
      this.db,
      'watch-player',
      uuid,
      (db) =>
        db
          .selectFrom('players')
          .innerJoin('organizations', 'organizations.id', 'players.organization_id')
          .selectAll('players')
          .select('organizations.name as organization_name')
          .where('players.uuid', '=', uuid)
          .executeTakeFirst(),
      (found) => found.organization_id,
    );
  }

  /**
   * The chapter at `index` in play order (position, then id, as the page lists them), with its video's
   * name. Both are required to be the player's organization's, so that the answer depends on that
   * organization's rows alone and other organizations' writes leave it cached.
   */
  chapterAt(player: PlayerRef, index: number): MaybePromise<{ video_id: number; video_name: string | null } | undefined> {
    const organization = player.organization_id;
    return cachedRead(
      this.db,
      'watch-chapter-at',
      `${player.id}:${index}`,
      (db) =>
        db
          .selectFrom('chapters')
          .leftJoin('videos', (join) => join.onRef('videos.id', '=', 'chapters.video_id').on('videos.organization_id', '=', organization))
          .select(['chapters.video_id', 'videos.name as video_name'])
          .where('chapters.organization_id', '=', organization)
          .where('chapters.player_id', '=', player.id)
          .orderBy('chapters.position')
          .orderBy('chapters.id')
          .limit(1)
          .offset(index)
          .executeTakeFirst(),
      () => organization,
    );
  }

  /** Whether the event (a CTA) shows on the player: one of its chapters', or an organization default. */
  isEventOf(eventId: number, player: PlayerRef): MaybePromise<boolean> {
    // Only a yes is kept: ids a sender makes up must not fill the cache (a miss always asks the database).
    const found = cachedRead(
      this.db,
      'watch-event-of',
      `${player.id}:${eventId}`,
      (db) =>
        db
          .selectFrom('events')
          .select('id')
          .where('id', '=', eventId)
          .where('organization_id', '=', player.organization_id)
          .where((eb) => eb.or([eb('player_id', '=', player.id), eb('chapter_id', 'is', null)]))
          .executeTakeFirst(),
      () => player.organization_id,
    );
    return mapMaybe(found, (row) => row !== undefined);
  }

  findAccessManager(playerId: number): Promise<WatchAccessRow | undefined> {
    return this.db
      .selectFrom('access_managers')
      .select([
        'id',
        'enabled',
        'custom_approval_message',
        'custom_denial_message',
        'whitelisted_domains_enabled',
        'whitelisted_domains',
        'max_access_code_uses',
        'access_code_uses',
      ])
      .where('player_id', '=', playerId)
      .executeTakeFirst();
  }

  /** Counts one use of the access code, unless `max` uses are already counted; false when used up. */
  async countAccessCodeUse(id: number, max: number | null): Promise<boolean> {
    let query = this.db
      .updateTable('access_managers')
      .set((eb) => ({ access_code_uses: eb('access_code_uses', '+', 1) }))
      .where('id', '=', id);
    if (max !== null) query = query.where('access_code_uses', '<', max);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  organizationDomains(organizationId: number) {
    return this.db
      .selectFrom('organizations')
      .select(['embed_domain', 'secure_embed_domain', 'playback_domain'])
      .where('id', '=', organizationId)
      .executeTakeFirst();
  }
}
