import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { nowSeconds } from '../../lib/time.ts';
import { newUuid } from '../../lib/tokens.ts';
import { cancelJobs } from '../job-kinds.ts';
import type { ChaptersRepository } from '../chapters/chapters.repository.ts';
import type { CreateVideoBody, Video } from '../videos/videos.schemas.ts';
import type { Player } from './players.schemas.ts';
import type { VideoRow } from '../videos/videos.repository.ts';
import { toVideo, type VideosService } from '../videos/videos.service.ts';
import type { PlayersRepository } from './players.repository.ts';
import type { PlayersService } from './players.service.ts';

/** The video operations that reach the players a video plays in. */
export class PlayerVideosService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly videos: VideosService,
    private readonly players: PlayersRepository,
    private readonly chapters: ChaptersRepository,
    private readonly playerService: PlayersService,
  ) {}

  /** Creating a video alone also makes its facade player, as the reference does. */
  async create(organizationId: number, body: CreateVideoBody): Promise<Video> {
    return this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const video = await this.videos.insert(trx, organizationId, body, now);
      await this.addFacade(trx, organizationId, video, video.name, now);
      return toVideo(video);
    });
  }

  /**
   * A video that waits for its direct upload, with its facade player (named `playerName`, else as the
   * video), in the caller's transaction (docs/uploads.md).
   */
  async createAwaitingUpload(
    trx: Kysely<DB>,
    organizationId: number,
    attrs: { name: string; description?: string | null; playerName?: string },
  ): Promise<{ video: VideoRow; player: Player }> {
    const now = nowSeconds();
    const video = await this.videos.insertAwaitingUpload(trx, organizationId, attrs, now);
    const player = await this.addFacade(trx, organizationId, video, attrs.playerName ?? video.name, now);
    return { video, player };
  }

  private async addFacade(trx: Kysely<DB>, organizationId: number, video: VideoRow, name: string, now: number): Promise<Player> {
    const player = await this.players.with(trx).insert({
      organization_id: organizationId,
      uuid: newUuid(),
      name,
      player_type: 'video_facade',
      release_date: now,
      created_at: now,
      updated_at: now,
    });
    await this.chapters
      .with(trx)
      .insert({ organization_id: organizationId, player_id: player.id, video_id: video.id, position: 0, created_at: now, updated_at: now });
    // Like every other way a player is made, announced to the player webhooks (videofacade_create).
    const made = await this.playerService.get(organizationId, player.id, trx);
    await this.playerService.announce(trx, organizationId, 'create', made);
    return made;
  }

  /**
   * Deletes the video; its chapters go with it and each affected player's positions stay dense.
   * Its processing is cancelled with it (a worker running it aborts the download or ffmpeg within a
   * second), and its files leave the store right after the commit.
   */
  async delete(organizationId: number, id: number): Promise<Video> {
    const row = await this.db.transaction().execute(async (trx) => {
      const chapters = this.chapters.with(trx);
      const playerIds = await chapters.playerIdsOfVideo(id);
      const deleted = await this.videos.deleteRow(trx, organizationId, id);
      await cancelJobs(trx, 'video.process', (payload) => payload.videoId === id);
      const now = nowSeconds();
      const remaining = await chapters.forPlayers(organizationId, playerIds);
      for (const playerId of playerIds)
        await chapters.renumber(
          remaining.filter((c) => c.player_id === playerId),
          now,
        );
      return deleted;
    });
    await this.videos.removeFiles(row);
    return toVideo(row);
  }
}
