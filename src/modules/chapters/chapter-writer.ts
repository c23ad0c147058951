import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalidField } from '../../lib/errors.ts';
import type { VideosRepository, VideoRow } from '../videos/videos.repository.ts';
import { toVideo, type VideosService } from '../videos/videos.service.ts';
import type { ChapterRow, ChaptersRepository } from './chapters.repository.ts';
import type { Chapter } from './chapters.schemas.ts';

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
 * The chapter rules shared by chapter operations and nested player writes, within one transaction:
 * a chapter plays an existing video of the organization or a new one, and positions stay 0..n-1
 * within the player.
 */
export class ChapterWriter {
  constructor(
    private readonly trx: Kysely<DB>,
    private readonly organizationId: number,
    private readonly now: number,
    readonly chapters: ChaptersRepository,
    readonly videos: VideosRepository,
    private readonly videoService: VideosService,
  ) {}

  async resolveVideo(input: { video_id?: number; video_attributes?: Parameters<VideosService['insert']>[2] }, field: string): Promise<VideoRow> {
    if (input.video_id !== undefined) {
      const video = await this.videos.find(this.organizationId, input.video_id);
      if (!video) throw invalidField(`${field}video_id`, 'does not name a video of this organization');
      return video;
    }
    if (input.video_attributes) return this.videoService.insert(this.trx, this.organizationId, input.video_attributes, this.now);
    throw invalidField(`${field}video_attributes`, 'is required (or video_id)');
  }

  insert(playerId: number, videoId: number, position: number): Promise<ChapterRow> {
    return this.chapters.insert({
      organization_id: this.organizationId,
      player_id: playerId,
      video_id: videoId,
      position,
      created_at: this.now,
      updated_at: this.now,
    });
  }
}

/** Opens a ChapterWriter on a transaction (players and chapters both write chapters). */
export class ChapterWriters {
  constructor(
    private readonly chapters: ChaptersRepository,
    private readonly videos: VideosRepository,
    private readonly videoService: VideosService,
  ) {}

  open(trx: Kysely<DB>, organizationId: number, now: number): ChapterWriter {
    return new ChapterWriter(trx, organizationId, now, this.chapters.with(trx), this.videos.with(trx), this.videoService);
  }
}
