import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { PlayersRepository } from './players.repository.ts';
import type { PlayersService } from './players.service.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';
import { placeAt, toChapter, type ChapterWriters } from '../chapters/chapter-writer.ts';
import type { ChapterRow, ChaptersRepository } from '../chapters/chapters.repository.ts';
import type { Chapter, CreateChapterBody, UpdateChapterBody } from '../chapters/chapters.schemas.ts';

/**
 * The chapter operations. A chapter is part of its player: every change touches the player first
 * (serialising concurrent writes) and is announced as a change of the player.
 */
export class PlayerChaptersService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly chapters: ChaptersRepository,
    private readonly videos: VideosRepository,
    private readonly playerRows: PlayersRepository,
    private readonly players: PlayersService,
    private readonly writers: ChapterWriters,
  ) {}

  private async render(row: ChapterRow, repo = this.videos): Promise<Chapter> {
    const [video] = await repo.findMany(row.organization_id, [row.video_id]);
    return toChapter(row, video);
  }

  /** A chapter change is a change of its player, for the player webhooks (as the player as it is now). */
  private async announce(trx: Kysely<DB>, organizationId: number, playerId: number): Promise<void> {
    await this.players.announce(trx, organizationId, 'update', await this.players.get(organizationId, playerId, trx));
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
      const player = await this.playerRows.with(trx).update(organizationId, body.player_id, { updated_at: now });
      if (!player) throw notFound('player', body.player_id);
      const writer = this.writers.open(trx, organizationId, now);
      const video = await writer.resolveVideo(body, '');
      const existing = await writer.chapters.forPlayers(organizationId, [player.id]);
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
      const writer = this.writers.open(trx, organizationId, now);
      const current = await writer.chapters.find(organizationId, id);
      if (!current) throw notFound('chapter', id);
      await this.playerRows.with(trx).update(organizationId, current.player_id, { updated_at: now });
      if (body.video_id !== undefined || body.video_attributes !== undefined) {
        const video = await writer.resolveVideo(body, '');
        await writer.chapters.update(organizationId, id, { video_id: video.id, updated_at: now });
      } else {
        await writer.chapters.update(organizationId, id, { updated_at: now });
      }
      if (body.position !== undefined) {
        const siblings = await writer.chapters.forPlayers(organizationId, [current.player_id]);
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
      const writer = this.writers.open(trx, organizationId, now);
      const current = await writer.chapters.find(organizationId, id);
      if (!current) throw notFound('chapter', id);
      const answer = await this.render(current, writer.videos);
      await this.playerRows.with(trx).update(organizationId, current.player_id, { updated_at: now });
      await writer.chapters.delete(organizationId, [id]);
      await writer.chapters.renumber(await writer.chapters.forPlayers(organizationId, [current.player_id]), now);
      await this.announce(trx, organizationId, current.player_id);
      return answer;
    });
  }
}
