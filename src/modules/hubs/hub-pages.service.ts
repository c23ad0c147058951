import type { Config } from '../../config.ts';
import { nowSeconds } from '../../lib/time.ts';
import { SITEMAP_MAX_URLS, videoSitemap, sitemapIndex, type VideoEntry } from '../../lib/sitemap.ts';
import type { IpRangesService } from '../ip-ranges/ip-ranges.service.ts';
import type { PlayersRepository } from '../players/players.repository.ts';
import type { Player } from '../players/players.schemas.ts';
import type { PlayersService } from '../players/players.service.ts';
import type { ThumbnailsService } from '../thumbnails/thumbnails.service.ts';
import type { EmbedCode } from '../watch/embed-code.ts';
import { expired, expiryOf, released, totalSeconds } from '../watch/watch-rules.ts';
import type { HubRow } from './hubs.repository.ts';
import type { HubsService } from './hubs.service.ts';
import type { HubCard, HubCategoryView, HubPageOutcome } from './hub-view.ts';

/**
 * The public pages of a hub (docs/hubs.md): the gallery, one category, and the video sitemap. They
 * show only what a visitor could watch: released, not expired, not behind an access code, embeddable
 * (the sitemap names the embed page) and with a ready video. The organization's blocked ranges apply
 * as on watch pages.
 */
export class HubPagesService {
  constructor(
    private readonly config: Config,
    private readonly hubs: HubsService,
    private readonly players: PlayersService,
    private readonly playerRows: PlayersRepository,
    private readonly thumbnails: ThumbnailsService,
    private readonly ipRanges: IpRangesService,
    private readonly embed: EmbedCode,
  ) {}

  private hubUrl(hub: HubRow): string {
    return `${this.config.publicUrl}/hubs/${hub.slug}`;
  }

  /** `GET /hubs/:slug` (all categories) or `GET /hubs/:slug/:category` (one). */
  async page(slug: string, categorySlug: string | null, ip: string): Promise<HubPageOutcome> {
    const hub = await this.hubs.findPublicBySlug(slug.toLowerCase());
    if (!hub) return { kind: 'not_found' };
    if (await this.ipRanges.isBlocked(hub.organization_id, ip)) return { kind: 'blocked' };
    const categories = await this.categoryViews(hub);
    const category = categorySlug === null ? null : (categories.find((c) => c.slug === categorySlug.toLowerCase()) ?? null);
    if (categorySlug !== null && !category) return { kind: 'not_found' };
    return { kind: 'page', view: { name: hub.name, description: hub.description, url: this.hubUrl(hub), category, categories } };
  }

  /**
   * The hub's sitemap: one `<url>` per watchable player with a poster (a video sitemap entry needs a
   * thumbnail). `page` 0 is the sitemap itself, or an index of pages 1..n beyond 50,000 players.
   */
  async sitemap(slug: string, page = 0): Promise<string | null> {
    const hub = await this.hubs.findPublicBySlug(slug.toLowerCase());
    if (!hub) return null;
    const seen = new Set<string>();
    const entries: VideoEntry[] = [];
    for (const category of await this.categoryViews(hub)) {
      for (const card of category.cards) {
        if (seen.has(card.uuid) || !card.poster) continue;
        seen.add(card.uuid);
        entries.push({
          loc: card.watchUrl,
          thumbnailLoc: card.poster,
          title: card.title,
          description: card.description ?? card.title,
          playerLoc: card.embedUrl,
          duration: card.duration,
          publicationDate: card.releasedAt,
          expirationDate: card.expiresAt,
        });
      }
    }
    const pages = Math.ceil(entries.length / SITEMAP_MAX_URLS);
    if (page === 0) {
      if (pages <= 1) return videoSitemap(entries);
      return sitemapIndex(Array.from({ length: pages }, (_, i) => `${this.hubUrl(hub)}/sitemap-${i + 1}.xml`));
    }
    if (page > pages) return null;
    return videoSitemap(entries.slice((page - 1) * SITEMAP_MAX_URLS, page * SITEMAP_MAX_URLS));
  }

  /** Every category with the cards of its watchable players, in order. */
  private async categoryViews(hub: HubRow): Promise<HubCategoryView[]> {
    const categories = await this.hubs.categoriesWithPlayers(hub.id);
    const ids = [...new Set(categories.flatMap((c) => c.player_ids))];
    // Read once: the rows say whether a player is embeddable, their Player resources the rest.
    const rows = await this.playerRows.findMany(hub.organization_id, ids);
    const players = await this.players.withChaptersMany(rows);
    const embeddable = new Set(rows.filter((r) => Boolean(r.embed_enabled)).map((r) => r.id));
    const now = nowSeconds();
    const cards = new Map<number, HubCard>();
    for (const player of players) {
      if (!this.watchable(player, embeddable.has(player.id), now)) continue;
      cards.set(player.id, await this.card(hub, player));
    }
    return categories.map((c) => ({
      name: c.name,
      slug: c.slug,
      url: `${this.hubUrl(hub)}/${c.slug}`,
      cards: c.player_ids.flatMap((id) => cards.get(id) ?? []),
    }));
  }

  private watchable(player: Player, embeddable: boolean, now: number): boolean {
    const ready = player.chapters_attributes.some((c) => c.video_attributes?.status === 'ready');
    return released(player, now) && !expired(player, now) && !player.access_code && embeddable && ready;
  }

  private async card(hub: HubRow, player: Player): Promise<HubCard> {
    const videos = player.chapters_attributes.map((c) => c.video_attributes);
    const poster = await this.thumbnails.posterKey(hub.organization_id, player.uuid);
    return {
      uuid: player.uuid,
      title: player.name,
      description: player.description ?? videos[0]?.description ?? null,
      duration: totalSeconds(videos),
      poster: poster ? this.embed.posterUrl(player.uuid) : null,
      watchUrl: this.embed.watchUrl(player.uuid),
      embedUrl: this.embed.embedUrl(player.uuid),
      releasedAt: player.release_date,
      expiresAt: expiryOf(player),
    };
  }
}
