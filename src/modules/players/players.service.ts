import type { Kysely, Updateable } from 'kysely';
import type { DB, PlayersTable } from '../../db/schema.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import { cachedRead, cachedReadMany } from '../../db/read-cache.ts';
import { newUuid } from '../../lib/tokens.ts';
import type { ChaptersRepository, ChapterRow } from '../chapters/chapters.repository.ts';
import { placeAt, toChapter, type ChapterWriters } from '../chapters/chapter-writer.ts';
import type { NestedChapterInput } from '../chapters/chapters.schemas.ts';
import type { VideoRow, VideosRepository } from '../videos/videos.repository.ts';
import type { AllotmentsService } from '../allotments/allotments.service.ts';
import { type PlayersRepository, type PlayerRow } from './players.repository.ts';
import type { CreatePlayerBody, Player, UpdatePlayerBody } from './players.schemas.ts';
import { parseStringList } from '../../lib/json-list.ts';
import type { WebhooksService } from '../webhooks/webhooks.service.ts';

export function toPlayer(row: PlayerRow, chapters: Player['chapters_attributes']): Player {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    status: row.status,
    access_code: row.access_code,
    autoplay: Boolean(row.autoplay),
    sharing_page_comments: Boolean(row.sharing_page_comments),
    sharing_page: Boolean(row.sharing_page),
    default_hd: Boolean(row.default_hd),
    splash_screen_fade: Boolean(row.splash_screen_fade),
    mute_onload: Boolean(row.mute_onload),
    height: row.height,
    width: row.width,
    playlist_always_open: Boolean(row.playlist_always_open),
    release_date: row.release_date,
    expiry_date: row.expiry_date,
    redirect_url: row.redirect_url,
    redirect_whole_page: Boolean(row.redirect_whole_page),
    color: row.color,
    play_button: Boolean(row.play_button),
    viral_sharing: Boolean(row.viral_sharing),
    whitelisted_embed_domains: parseStringList(row.whitelisted_embed_domains),
    embed_button: Boolean(row.embed_button),
    description: row.description,
    viral_sharing_message: row.viral_sharing_message,
    custom_sharing_link: row.custom_sharing_link,
    playlist_color: row.playlist_color,
    on_complete: row.on_complete,
    player_type: row.player_type,
    chapters_attributes: chapters,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Client settings → column values (colour without '#', domains as a JSON list). */
function settingsColumns(body: Partial<CreatePlayerBody>): Updateable<PlayersTable> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || key === 'chapters_attributes' || key === 'auth_token') continue;
    out[key] = value;
  }
  if (typeof body.name === 'string') out.name = body.name.trim() || body.name;
  if (typeof body.color === 'string') out.color = body.color.replace(/^#/, '').toLowerCase();
  if (typeof body.playlist_color === 'string') out.playlist_color = body.playlist_color.replace(/^#/, '').toLowerCase();
  if (body.whitelisted_embed_domains !== undefined) {
    const list = Array.isArray(body.whitelisted_embed_domains) ? body.whitelisted_embed_domains : body.whitelisted_embed_domains.split(',');
    out.whitelisted_embed_domains = JSON.stringify([...new Set(list.map((d) => d.trim().toLowerCase()).filter(Boolean))]);
  }
  return out;
}

const knownColumns = new Set([
  'name',
  'access_code',
  'autoplay',
  'sharing_page_comments',
  'sharing_page',
  'default_hd',
  'splash_screen_fade',
  'mute_onload',
  'height',
  'width',
  'playlist_always_open',
  'release_date',
  'expiry_date',
  'redirect_url',
  'redirect_whole_page',
  'color',
  'play_button',
  'viral_sharing',
  'whitelisted_embed_domains',
  'embed_button',
  'description',
  'viral_sharing_message',
  'custom_sharing_link',
  'playlist_color',
  'on_complete',
]);

function onlyKnown(columns: Updateable<PlayersTable>): Updateable<PlayersTable> {
  return Object.fromEntries(Object.entries(columns).filter(([k]) => knownColumns.has(k)));
}

/** The event named after the player's type, as its `player_type` says: `videofacade_*` for a video facade, `playlist_*` otherwise. */
export function playerEvent(player: Player, action: 'create' | 'update' | 'destroy'): string {
  return `${player.player_type === 'video_facade' ? 'videofacade' : 'playlist'}_${action}`;
}

export class PlayersService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly players: PlayersRepository,
    private readonly chapters: ChaptersRepository,
    private readonly videos: VideosRepository,
    private readonly writers: ChapterWriters,
    private readonly allotments: AllotmentsService,
    private readonly webhooks: WebhooksService,
  ) {}

  /**
   * Tells the organization's player webhooks about a change of the player, as it is now; call it
   * inside the change's transaction.
   */
  announce(trx: Kysely<DB>, organizationId: number, action: 'create' | 'update' | 'destroy', player: Player): Promise<number> {
    return this.webhooks.notify(trx, organizationId, 'players', playerEvent(player, action), { player_uuid: player.uuid, player_id: player.id, player });
  }

  /**
   * Players with their chapters and each chapter's video, in two queries whatever the count (two per
   * organization when rows of several are given). Every row read is required to be the organization's,
   * which is what lets `get` keep a player through other organizations' writes.
   */
  private async assemble(rows: PlayerRow[], db: Kysely<DB> = this.db): Promise<Player[]> {
    const chapters: ChapterRow[] = [];
    const videos: VideoRow[] = [];
    for (const organizationId of new Set(rows.map((r) => r.organization_id))) {
      const ids = rows.filter((r) => r.organization_id === organizationId).map((r) => r.id);
      const theirs = await this.chapters.with(db).forPlayers(organizationId, ids);
      chapters.push(...theirs);
      videos.push(...(await this.videos.with(db).findMany(organizationId, [...new Set(theirs.map((c) => c.video_id))])));
    }
    const videoById = new Map(videos.map((v) => [v.id, v]));
    const byPlayer = new Map<number, Player['chapters_attributes']>();
    for (const c of chapters) {
      const list = byPlayer.get(c.player_id) ?? [];
      list.push(toChapter(c, videoById.get(c.video_id)!));
      byPlayer.set(c.player_id, list);
    }
    return rows.map((r) => toPlayer(r, byPlayer.get(r.id) ?? []));
  }

  async create(organizationId: number, body: CreatePlayerBody): Promise<Player> {
    return this.db.transaction().execute(async (trx) => {
      // A new player is embeddable, so it takes one unit of the embeds allotment.
      await this.allotments.reserve(trx, organizationId, 'embeds');
      const now = nowSeconds();
      const row = await this.players.with(trx).insert({
        ...onlyKnown(settingsColumns(body)),
        name: body.name.trim() || body.name,
        organization_id: organizationId,
        uuid: newUuid(),
        player_type: 'playlist',
        release_date: body.release_date ?? now,
        created_at: now,
        updated_at: now,
      });
      await this.writeChapters(trx, organizationId, row.id, [], body.chapters_attributes ?? [], now);
      const [player] = await this.assemble([row], trx);
      await this.announce(trx, organizationId, 'create', player);
      return player;
    });
  }

  /**
   * Applies nested chapter attributes the Rails way: items with `id` update (or `_destroy`) that
   * chapter, items without one add a chapter; then positions are made dense again.
   */
  private async writeChapters(trx: Kysely<DB>, organizationId: number, playerId: number, existing: ChapterRow[], inputs: NestedChapterInput[], now: number) {
    if (inputs.length === 0) return;
    const writer = this.writers.open(trx, organizationId, now);
    let ordered = [...existing];
    // New chapters without a position keep the order in which they were sent.
    const indexed = inputs.map((input, index) => ({ input, index }));
    indexed.sort((a, b) => (a.input.position ?? Number.MAX_SAFE_INTEGER) - (b.input.position ?? Number.MAX_SAFE_INTEGER) || a.index - b.index);
    for (const { input, index } of indexed) {
      const field = `chapters_attributes.${index}.`;
      if (input.id !== undefined) {
        const chapter = ordered.find((c) => c.id === input.id);
        if (!chapter) throw invalidField(`${field}id`, 'does not name a chapter of this player');
        if (input._destroy) {
          await writer.chapters.delete(organizationId, [chapter.id]);
          ordered = ordered.filter((c) => c !== chapter);
          continue;
        }
        if (input.video_id !== undefined || input.video_attributes !== undefined) {
          const video = await writer.resolveVideo(input, field);
          await writer.chapters.update(organizationId, chapter.id, { video_id: video.id, updated_at: now });
        }
        if (input.position !== undefined) ordered = placeAt(ordered, chapter, input.position);
        continue;
      }
      if (input._destroy) continue;
      const video = await writer.resolveVideo(input, field);
      const created = await writer.insert(playerId, video.id, ordered.length);
      ordered = placeAt([...ordered, created], created, input.position);
    }
    await writer.chapters.renumber(ordered, now);
  }

  /** The Player resource of a row already read (its chapters and their videos are read now). */
  async withChapters(row: PlayerRow): Promise<Player> {
    return (await this.assemble([row]))[0];
  }

  /** The Player resources of rows already read, in two queries whatever their number. */
  withChaptersMany(rows: PlayerRow[]): Promise<Player[]> {
    return this.assemble(rows);
  }

  /**
   * The player; `trx` reads it inside a caller's transaction (as it is about to be committed).
   * Outside one, the resource is kept in the read cache (src/db/read-cache.ts) until its player,
   * chapters or videos change: its queries all require the organization, so other organizations'
   * writes leave it, and so do CTAs written. What it answers then is shared, and frozen throughout.
   */
  async get(organizationId: number, id: number, trx?: Kysely<DB>): Promise<Player> {
    const player = trx
      ? await this.load(trx, organizationId, id)
      : await cachedRead(
          this.db,
          'player',
          `${organizationId}:${id}`,
          (db) => this.load(db, organizationId, id),
          () => organizationId,
        );
    if (!player) throw notFound('player', id);
    return player;
  }

  private async load(db: Kysely<DB>, organizationId: number, id: number): Promise<Player | undefined> {
    const row = await this.players.with(db).find(organizationId, id);
    return row && (await this.assemble([row], db))[0];
  }

  async getByUuid(organizationId: number, uuid: string): Promise<Player> {
    const row = await this.players.findByUuid(organizationId, uuid);
    if (!row) throw notFound('player');
    return this.withChapters(row);
  }

  async list(organizationId: number, query: { query?: string }, page: Page): Promise<Listing<Player>> {
    // The count first: with it, a page in the later half is read from the end.
    const total = page.paged ? await this.players.count(organizationId, query.query) : null;
    const rows = await this.players.list(organizationId, { limit: page.limit, offset: page.offset, query: query.query }, total ?? undefined);
    const items = await this.resources(organizationId, rows);
    return { items, total: total ?? items.length };
  }

  /**
   * The Player resources of a page's rows, each the one `get` keeps in the read cache (the same
   * namespace and key): those kept are answered from memory, the others read together and kept.
   */
  private async resources(organizationId: number, rows: PlayerRow[]): Promise<Player[]> {
    const keyOf = (id: number) => `${organizationId}:${id}`;
    const ids = new Map(rows.map((r) => [keyOf(r.id), r.id]));
    const kept = await cachedReadMany(
      this.db,
      'player',
      [...ids.keys()],
      async (db, keys) => {
        const found = await this.players.with(db).findMany(
          organizationId,
          keys.map((k) => ids.get(k)!),
        );
        return new Map((await this.assemble(found, db)).map((p) => [keyOf(p.id), p]));
      },
      () => organizationId,
    );
    // A player deleted since its page was read is answered as the page found it.
    const gone = rows.filter((r) => !kept.has(keyOf(r.id)));
    const assembled = new Map((gone.length > 0 ? await this.assemble(gone) : []).map((p) => [keyOf(p.id), p]));
    return rows.map((r) => kept.get(keyOf(r.id)) ?? assembled.get(keyOf(r.id))!);
  }

  async update(organizationId: number, id: number, body: UpdatePlayerBody): Promise<Player> {
    return this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const row = await this.players.with(trx).update(organizationId, id, { ...onlyKnown(settingsColumns(body)), updated_at: now });
      if (!row) throw notFound('player', id);
      if (body.chapters_attributes) {
        const existing = await this.chapters.with(trx).forPlayers(organizationId, [id]);
        await this.writeChapters(trx, organizationId, id, existing, body.chapters_attributes, now);
      }
      const [player] = await this.assemble([row], trx);
      await this.announce(trx, organizationId, 'update', player);
      return player;
    });
  }

  /** Deletes the player and its chapters; the videos stay in the library. */
  async delete(organizationId: number, id: number): Promise<Player> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.players.with(trx).find(organizationId, id);
      if (!row) throw notFound('player', id);
      const [player] = await this.assemble([row], trx);
      await this.players.with(trx).delete(organizationId, id);
      await this.announce(trx, organizationId, 'destroy', player);
      return player;
    });
  }

  async deleteByUuid(organizationId: number, uuid: string): Promise<Player> {
    const row = await this.players.findByUuid(organizationId, uuid);
    if (!row) throw notFound('player');
    return this.delete(organizationId, row.id);
  }
}
