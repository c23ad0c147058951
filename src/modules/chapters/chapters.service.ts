import { notifyPlayerChange } from '../webhooks/webhooks.service.ts';
import { PlayersService } from '../players/players.service.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { PlayersRepository } from '../players/players.repository.ts';
import { VideosRepository, type VideoRow } from '../videos/videos.repository.ts';
import { insertVideo, type newVideoRow, toVideo } from '../videos/videos.service.ts';
import { ChaptersRepository, type ChapterRow } from './chapters.repository.ts';
import type { Chapter, CreateChapterBody, UpdateChapterBody } from './chapters.schemas.ts';

export function toChapter(row: ChapterRow, video: VideoRow): Chapter {
  return {
    id: row.id,
    position: row.position,
    player_id: row.player_id,
    video_id: row.video_id,
    video_attributes: toVideo(video),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Moves `item` to `position` (clamped) in an ordered list. */
export function placeAt<T>(list: T[], item: T, position: number | undefined): T[] {
  const rest = list.filter((x) => x !== item);
  const at = position === undefined ? rest.length : Math.min(Math.max(position, 0), rest.length);
  return [...rest.slice(0, at), item, ...rest.slice(at)];
}

/**
 * The chapter rules shared by chapter operations and nested player writes: a chapter plays an
 * existing video of the organization or a new one, and positions stay 0..n-1 within the player.
 */
export class ChapterWriter {
  readonly chapters: ChaptersRepository;
  readonly videos: VideosRepository;

  constructor(
    private readonly trx: Kysely<DB>,
    private readonly organizationId: number,
    private readonly now: number,
  ) {
    this.chapters = new ChaptersRepository(trx);
    this.videos = new VideosRepository(trx);
  }

  async resolveVideo(input: { video_id?: number; video_attributes?: Parameters<typeof newVideoRow>[1] }, field: string): Promise<VideoRow> {
    if (input.video_id !== undefined) {
      const video = await this.videos.find(this.organizationId, input.video_id);
      if (!video) throw invalidField(`${field}video_id`, 'does not name a video of this organization');
      return video;
    }
    if (input.video_attributes) return insertVideo(this.trx, this.organizationId, input.video_attributes, this.now);
    throw invalidField(`${field}video_attributes`, 'is required (or video_id)');
  }

  insert(playerId: number, videoId: number, position: number): Promise<ChapterRow> {
    return this.chapters.insert({ organization_id: this.organizationId, player_id: playerId, video_id: videoId, position, created_at: this.now, updated_at: this.now });
  }
}

export class ChaptersService {
  private readonly chapters: ChaptersRepository;
  private readonly videos: VideosRepository;

  constructor(private readonly db: Kysely<DB>) {
    this.chapters = new ChaptersRepository(db);
    this.videos = new VideosRepository(db);
  }

  private async render(row: ChapterRow, repo = this.videos): Promise<Chapter> {
    const [video] = await repo.findMany([row.video_id]);
    return toChapter(row, video);
  }

  /** A chapter change is a change of its player, for the player webhooks (as the player as it is now). */
  private async announce(trx: Kysely<DB>, organizationId: number, playerId: number): Promise<void> {
    await notifyPlayerChange(trx, organizationId, 'update', await new PlayersService(trx).get(organizationId, playerId));
  }

  async get(organizationId: number, id: number): Promise<Chapter> {
    const row = await this.chapters.find(organizationId, id);
    if (!row) throw notFound('chapter', id);
    return this.render(row);
  }

  async create(organizationId: number, body: CreateChapterBody): Promise<Chapter> {
    return this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      // Touching the player first serialises concurrent chapter writes on it (a row lock on PostgreSQL).
      const player = await new PlayersRepository(trx).update(organizationId, body.player_id, { updated_at: now });
      if (!player) throw notFound('player', body.player_id);
      const writer = new ChapterWriter(trx, organizationId, now);
      const video = await writer.resolveVideo(body, '');
      const existing = await writer.chapters.forPlayers([player.id]);
      const created = await writer.insert(player.id, video.id, existing.length);
      const ordered = placeAt([...existing, created], created, body.position);
      await writer.chapters.renumber(ordered, now);
      const row = await writer.chapters.find(organizationId, created.id);
      await this.announce(trx, organizationId, player.id);
      return toChapter(row!, video);
    });
  }

  async update(organizationId: number, id: number, body: UpdateChapterBody): Promise<Chapter> {
    return this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const writer = new ChapterWriter(trx, organizationId, now);
      const current = await writer.chapters.find(organizationId, id);
      if (!current) throw notFound('chapter', id);
      await new PlayersRepository(trx).update(organizationId, current.player_id, { updated_at: now });
      if (body.video_id !== undefined || body.video_attributes !== undefined) {
        const video = await writer.resolveVideo(body, '');
        await writer.chapters.update(id, { video_id: video.id, updated_at: now });
      } else {
        await writer.chapters.update(id, { updated_at: now });
      }
      if (body.position !== undefined) {
        const siblings = await writer.chapters.forPlayers([current.player_id]);
        const self = siblings.find((c) => c.id === id)!;
        await writer.chapters.renumber(placeAt(siblings, self, body.position), now);
      }
      const row = await writer.chapters.find(organizationId, id);
      await this.announce(trx, organizationId, current.player_id);
      return this.render(row!, writer.videos);
    });
  }

  /** Deletes the chapter (not its video) and closes the gap in the player's positions. */
  async delete(organizationId: number, id: number): Promise<Chapter> {
    return this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const writer = new ChapterWriter(trx, organizationId, now);
      const current = await writer.chapters.find(organizationId, id);
      if (!current) throw notFound('chapter', id);
      const answer = await this.render(current, writer.videos);
      await new PlayersRepository(trx).update(organizationId, current.player_id, { updated_at: now });
      await writer.chapters.delete([id]);
      await writer.chapters.renumber(await writer.chapters.forPlayers([current.player_id]), now);
      await this.announce(trx, organizationId, current.player_id);
      return answer;
    });
  }
}
