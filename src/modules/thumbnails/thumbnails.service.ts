import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { enqueue, type JobPayload } from '../job-kinds.ts';
import { nowSeconds } from '../../lib/time.ts';
import { newUuid } from '../../lib/tokens.ts';
import type { Media } from '../../media/media.ts';
import type { ChaptersRepository } from '../chapters/chapters.repository.ts';
import type { PlayersRepository, PlayerRow } from '../players/players.repository.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';
import type { PlayerSelectedThumbnail, PlayerThumbnailItem, SelectVideoThumbnailBody, Thumbnail } from './thumbnails.schemas.ts';
import type { ThumbnailsRepository, ThumbnailRow } from './thumbnails.repository.ts';

/** The job that copies a custom thumbnail's image into the media store. */
export type ThumbnailFetchPayload = JobPayload<'thumbnail.fetch'>;

/** How a player is named in the path: `/players/:player_id`, `/players/uuid=:uuid`, `/v1.1/players/:player_uuid`. */
export type PlayerRef = { id: number } | { uuid: string };

/** `/v1.1/players/:player_uuid/…` takes a UUID, or a numeric id as every other player path does. */
export function playerRefOf(value: string): PlayerRef {
  return /^\d{1,10}$/.test(value) ? { id: Number(value) } : { uuid: value };
}

/**
 * Thumbnail operations over the thumbnails the media pipeline generates (and the custom ones set
 * by URL). A video has at most one selected thumbnail; a player's selected thumbnails are those of
 * its chapters' videos, in chapter order (docs/thumbnails.md).
 */
export class ThumbnailsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly media: Media,
    private readonly thumbnails: ThumbnailsRepository,
    private readonly videos: VideosRepository,
    private readonly players: PlayersRepository,
    private readonly chapters: ChaptersRepository,
  ) {}

  /** The stored image by signed URL; a custom thumbnail not (yet) copied keeps the URL it was set with. */
  private urlOf(row: ThumbnailRow, now: number): string | null {
    return row.path ? this.media.fileUrl(row.path, now) : row.url;
  }

  toThumbnail(row: ThumbnailRow, now = nowSeconds()): Thumbnail {
    return { id: row.id, uuid: row.uuid, url: this.urlOf(row, now), created_at: row.created_at, updated_at: row.updated_at };
  }

  private toPlayerEntry(row: ThumbnailRow, now: number): PlayerSelectedThumbnail {
    return {
      thumbnail: {
        thumbnail_type: row.kind === 'custom' ? 'custom' : 'generated',
        url: this.urlOf(row, now),
        id: row.id,
        uuid: row.uuid,
        video_id: row.video_id,
        millisecond: row.millisecond,
        created_at: row.created_at,
        updated_at: row.updated_at,
      },
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  private async requireVideo(organizationId: number, videoId: number, db: Kysely<DB> = this.db) {
    const video = await this.videos.with(db).find(organizationId, videoId);
    if (!video) throw notFound('video', videoId);
    return video;
  }

  private async requirePlayer(organizationId: number, ref: PlayerRef, db: Kysely<DB> = this.db): Promise<PlayerRow> {
    const players = this.players.with(db);
    const player = 'id' in ref ? await players.find(organizationId, ref.id) : await players.findByUuid(organizationId, ref.uuid);
    if (!player) throw 'id' in ref ? notFound('player', ref.id) : notFound('player');
    return player;
  }

  /** Runs a write; losing a race on the one-selected-per-video index is a 409, not a 5xx. */
  private async write<T>(work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(work);
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('conflict', 'The selected thumbnail was changed at the same time; try again');
      throw err;
    }
  }

  async listForVideo(organizationId: number, videoId: number, page: Page): Promise<Listing<Thumbnail>> {
    await this.requireVideo(organizationId, videoId);
    const [rows, total] = await Promise.all([
      this.thumbnails.forVideo(organizationId, videoId, page.limit, page.offset),
      page.paged ? this.thumbnails.countForVideo(organizationId, videoId) : Promise.resolve(null),
    ]);
    const now = nowSeconds();
    const items = rows.map((r) => this.toThumbnail(r, now));
    return { items, total: total ?? items.length };
  }

  async selectedForVideo(organizationId: number, videoId: number): Promise<Thumbnail> {
    await this.requireVideo(organizationId, videoId);
    const [row] = await this.thumbnails.selectedFor(organizationId, [videoId]);
    if (!row) throw new AppError('not_found', '404: The video has no selected thumbnail (it has not been processed yet)');
    return this.toThumbnail(row);
  }

  async get(organizationId: number, id: number): Promise<Thumbnail> {
    const row = await this.thumbnails.find(organizationId, id);
    if (!row) throw notFound('thumbnail', id);
    return this.toThumbnail(row);
  }

  /** Selects an existing thumbnail of the video, or a custom one by URL. */
  async selectForVideo(organizationId: number, videoId: number, body: SelectVideoThumbnailBody): Promise<Thumbnail> {
    const url = body.thumbnail_url ?? body.thumbnails?.[0]?.url;
    const given = [body.thumbnail_id !== undefined, body.thumbnail_url !== undefined, body.thumbnails !== undefined].filter(Boolean).length;
    if (given === 0) throw invalidField('thumbnail_id', 'is required (or thumbnail_url)');
    if (given > 1) throw invalidField('thumbnail_id', 'give one of thumbnail_id, thumbnail_url or thumbnails');
    const row = await this.write(async (trx) => {
      await this.requireVideo(organizationId, videoId, trx);
      const repo = this.thumbnails.with(trx);
      const now = nowSeconds();
      if (body.thumbnail_id !== undefined) {
        const target = await repo.find(organizationId, body.thumbnail_id);
        if (!target || target.video_id !== videoId) throw invalidField('thumbnail_id', 'does not name a thumbnail of this video');
        return repo.select(videoId, target.id, now);
      }
      return this.selectCustom(trx, organizationId, videoId, url!, now);
    });
    return this.toThumbnail(row);
  }

  /**
   * A custom thumbnail from `url` becomes the video's selection: the video's custom thumbnail with
   * that URL when there is one, else a new one whose image a job copies into the media store.
   */
  private async selectCustom(trx: Kysely<DB>, organizationId: number, videoId: number, url: string, now: number): Promise<ThumbnailRow> {
    const repo = this.thumbnails.with(trx);
    const existing = await repo.findCustomByUrl(organizationId, videoId, url);
    if (existing) return repo.select(videoId, existing.id, now);
    const created = await repo.insert({
      organization_id: organizationId,
      video_id: videoId,
      uuid: newUuid(),
      kind: 'custom',
      path: null,
      url,
      millisecond: null,
      width: null,
      height: null,
      selected: false,
      created_at: now,
      updated_at: now,
    });
    await enqueue(trx, 'thumbnail.fetch', { thumbnail_id: created.id, url });
    return repo.select(videoId, created.id, now);
  }

  /** The videos of the player's chapters, in chapter order, each once. */
  private async videoIdsOf(db: Kysely<DB>, player: PlayerRow): Promise<{ byChapter: number[]; unique: number[] }> {
    const byChapter = (await this.chapters.with(db).forPlayers(player.organization_id, [player.id])).map((c) => c.video_id);
    return { byChapter, unique: [...new Set(byChapter)] };
  }

  private async entriesOf(db: Kysely<DB>, organizationId: number, player: PlayerRow): Promise<PlayerSelectedThumbnail[]> {
    const { unique } = await this.videoIdsOf(db, player);
    const selected = new Map((await this.thumbnails.with(db).selectedFor(organizationId, unique)).map((t) => [t.video_id, t]));
    const now = nowSeconds();
    return unique.flatMap((videoId) => {
      const row = selected.get(videoId);
      return row ? [this.toPlayerEntry(row, now)] : [];
    });
  }

  /**
   * The store key of the image a player's page shows as its poster: the selected thumbnail of its
   * first video that has one stored. A custom thumbnail whose image was not (or could not be) copied
   * into the store is never shown: its URL may name any address.
   */
  async posterKey(organizationId: number, playerUuid: string): Promise<string | null> {
    const keys = await this.storedKeys(organizationId, playerUuid);
    return keys.values().next().value ?? null;
  }

  /**
   * The store key of each of a player's videos' selected thumbnail, where its image is stored (the
   * same rule as the poster), by video id in chapter order: the watch page's chapter list shows them.
   */
  async storedKeys(organizationId: number, playerUuid: string): Promise<Map<number, string>> {
    const player = await this.requirePlayer(organizationId, { uuid: playerUuid });
    const { unique } = await this.videoIdsOf(this.db, player);
    const selected = new Map((await this.thumbnails.selectedFor(organizationId, unique)).map((t) => [t.video_id, t]));
    const keys = new Map<number, string>();
    for (const videoId of unique) {
      const path = selected.get(videoId)?.path;
      if (path) keys.set(videoId, path);
    }
    return keys;
  }

  async playerSelected(organizationId: number, ref: PlayerRef): Promise<PlayerSelectedThumbnail[]> {
    const player = await this.requirePlayer(organizationId, ref);
    return this.entriesOf(this.db, organizationId, player);
  }

  /**
   * Sets the player's thumbnails: `{thumbnail_id}` selects that thumbnail for its video (a video of
   * the player); `{thumbnail_url}` sets a custom thumbnail for `video_id`, or for the video of the
   * chapter at the item's index. One item per video. Answers the player's selected thumbnails.
   */
  async setPlayerSelected(organizationId: number, ref: PlayerRef, items: PlayerThumbnailItem[]): Promise<PlayerSelectedThumbnail[]> {
    return this.write(async (trx) => {
      const player = await this.requirePlayer(organizationId, ref, trx);
      const { byChapter, unique } = await this.videoIdsOf(trx, player);
      const inPlayer = new Set(unique);
      const repo = this.thumbnails.with(trx);
      const known = new Map(
        (
          await repo.findMany(
            organizationId,
            items.flatMap((i) => (i.thumbnail_id === undefined ? [] : [i.thumbnail_id])),
          )
        ).map((t) => [t.id, t]),
      );
      const plan: Array<{ videoId: number; thumbnailId?: number; url?: string }> = [];
      const seen = new Set<number>();
      items.forEach((item, i) => {
        const field = `thumbnails.${i}`;
        if ((item.thumbnail_id === undefined) === (item.thumbnail_url === undefined)) {
          throw invalidField(field, 'must have either thumbnail_id or thumbnail_url');
        }
        if (item.video_id !== undefined && !inPlayer.has(item.video_id)) throw invalidField(`${field}.video_id`, 'is not a video of this player');
        let videoId: number;
        if (item.thumbnail_id !== undefined) {
          const row = known.get(item.thumbnail_id);
          if (!row || !inPlayer.has(row.video_id)) throw invalidField(`${field}.thumbnail_id`, "does not name a thumbnail of this player's videos");
          if (item.video_id !== undefined && item.video_id !== row.video_id) throw invalidField(`${field}.video_id`, 'is not the video of that thumbnail');
          videoId = row.video_id;
        } else {
          const byIndex = byChapter[i];
          if (item.video_id === undefined && byIndex === undefined) throw invalidField(`${field}.video_id`, `is required: the player has no chapter ${i}`);
          videoId = item.video_id ?? byIndex;
        }
        if (seen.has(videoId)) throw invalidField(field, `selects a second thumbnail for video ${videoId}`);
        seen.add(videoId);
        plan.push({ videoId, thumbnailId: item.thumbnail_id, url: item.thumbnail_url });
      });
      const now = nowSeconds();
      for (const step of plan) {
        if (step.thumbnailId !== undefined) await repo.select(step.videoId, step.thumbnailId, now);
        else await this.selectCustom(trx, organizationId, step.videoId, step.url!, now);
      }
      return this.entriesOf(trx, organizationId, player);
    });
  }
}
