import { createHmac } from 'node:crypto';
import { sameSecret } from '../../lib/constant-time.ts';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import { invalidField } from '../../lib/errors.ts';
import type { Database } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import { parseStringList } from '../../lib/json-list.ts';
import { nowSeconds } from '../../lib/time.ts';
import { createMedia } from '../../media/media.ts';
import { createCaptionsService, type CaptionsService } from '../captions/captions.service.ts';
import type { EventRow } from '../events/events.repository.ts';
import { EventsService } from '../events/events.service.ts';
import { IpRangesService } from '../ip-ranges/ip-ranges.service.ts';
import { LiveRepository } from '../live/live.repository.ts';
import { PlayersService } from '../players/players.service.ts';
import { createThumbnailsService, type ThumbnailsService } from '../thumbnails/thumbnails.service.ts';
import { VideoMediaService } from '../videos/video-media.service.ts';
import { notifyWebhooks } from '../webhooks/webhooks.service.ts';
import type { AnalyticsBeacon } from './watch.schemas.ts';
import { escapeHtml } from '../../web/pages.ts';
import { WatchRepository, type WatchAccessRow, type WatchPlayerRow } from './watch.repository.ts';

export type PageKind = 'watch' | 'embed';

/** Who asks for a page, as far as the rules care. */
export interface Visitor {
  ip: string;
  /** The Referer header, if any: the page an embed sits on. */
  referer?: string;
  /** Cookies by name. */
  cookies: Record<string, string>;
  /** An access code the visitor just typed in. */
  accessCode?: string;
}

export interface PageEvent {
  id: number;
  event_type: string;
  /** -1: after the chapter ends (postroll). */
  second: number;
  duration: number | null;
  auto_close: boolean;
  closeable: boolean;
  fullscreen: boolean;
  width: number | null;
  html: string | null;
  background_color: string | null;
}

export interface PageChapter {
  position: number;
  name: string;
  description: string | null;
  /** ready: sources play; live: the broadcast over HLS; processing / unavailable: nothing to play yet. */
  state: 'ready' | 'live' | 'processing' | 'unavailable';
  sources: Array<{ src: string; type: string; quality: string }>;
  captions: Array<{ src: string; srclang: string; label: string; default: boolean }>;
  events: PageEvent[];
}

/** Everything a page shows, decided here; the HTML is rendered from it (src/web/pages.ts). */
export interface PageView {
  kind: PageKind;
  uuid: string;
  name: string;
  description: string | null;
  organizationName: string;
  watchUrl: string;
  embedUrl: string;
  poster: string | null;
  width: number;
  height: number;
  /** Frame ancestors allowed to embed the page; null: anyone (no list is set). */
  frameAncestors: string[] | null;
  sharingPage: boolean;
  shareLink: string | null;
  embedCode: string | null;
  approvalMessage: string | null;
  settings: {
    autoplay: boolean;
    mute_onload: boolean;
    play_button: boolean;
    splash_screen_fade: boolean;
    playlist_always_open: boolean;
    default_hd: boolean;
    color: string;
    playlist_color: string | null;
    redirect_url: string | null;
    redirect_whole_page: boolean;
  };
  chapters: PageChapter[];
}

/** Why a page is not shown; rendered as a small HTML page with this status. */
export interface Refusal {
  status: 403 | 404 | 410;
  title: string;
  message: string;
  /** The visitor may type the access code (again). */
  askCode?: boolean;
}

export type PageOutcome =
  | { kind: 'page'; view: PageView }
  | { kind: 'refused'; refusal: Refusal }
  /** A correct access code: remember it (a cookie) and show the page. */
  | { kind: 'granted'; cookie: { name: string; value: string } };

export interface OembedQuery {
  url: string;
  maxwidth?: number;
  maxheight?: number;
}

export interface Oembed {
  version: '1.0';
  type: 'video';
  provider_name: string;
  provider_url: string;
  title: string;
  author_name: string;
  html: string;
  width: number;
  height: number;
  thumbnail_url?: string;
  thumbnail_width?: number;
  thumbnail_height?: number;
}

export type OembedOutcome = { kind: 'ok'; oembed: Oembed } | { kind: 'not_found' } | { kind: 'forbidden'; message: string };

/** What a player UUID in an address may look like; anything else is answered like an unknown player. */
const UUID = /^[0-9a-fA-F-]{1,64}$/;
const UUID_PATH = /^\/(watch|embed)\/([0-9a-fA-F-]{1,64})\/?$/;
const NOT_FOUND: Refusal = { status: 404, title: 'Video not found', message: 'There is no video at this address.' };

/** Whether the player is shown now: released, and not expired (an expiry of 0 means none). */
const released = (player: WatchPlayerRow, now: number) => player.release_date <= now;
const expired = (player: WatchPlayerRow, now: number) => player.expiry_date !== null && player.expiry_date > 0 && player.expiry_date <= now;
const showing = (player: WatchPlayerRow, now: number) => released(player, now) && !expired(player, now);

export const accessCookieName = (uuid: string) => `reelbase_access_${uuid}`;

function toPageEvent(row: EventRow): PageEvent {
  return {
    id: row.id,
    event_type: row.event_type,
    second: row.second,
    duration: row.duration,
    auto_close: Boolean(row.auto_close),
    closeable: Boolean(row.closeable),
    fullscreen: Boolean(row.fullscreen),
    width: row.width,
    html: row.html,
    background_color: row.background_color,
  };
}

/** The host of an absolute URL, lower-cased, or null. */
function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** A host is allowed by a domain list when it is one of the domains or under one of them. */
export function domainAllows(domains: string[], host: string): boolean {
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

/** Scales width × height down to fit maxwidth × maxheight, keeping the aspect ratio (oEmbed). */
export function fitInto(width: number, height: number, maxWidth?: number, maxHeight?: number): { width: number; height: number } {
  let scale = 1;
  if (maxWidth !== undefined && width > maxWidth) scale = Math.min(scale, maxWidth / width);
  if (maxHeight !== undefined && height > maxHeight) scale = Math.min(scale, maxHeight / height);
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}

/**
 * The public pages of a player (DESIGN §1): the share page `/watch/:uuid`, the iframe page
 * `/embed/:uuid` and the oEmbed description of either. No token: the rules are the player's own
 * (release and expiry dates, access code, embedding and its allowed domains) and the organization's
 * blocked IP ranges. Decisions are documented in docs/watch.md.
 */
export class WatchService {
  private readonly repo: WatchRepository;
  private readonly players: PlayersService;
  private readonly events: EventsService;
  private readonly ipRanges: IpRangesService;
  private readonly live: LiveRepository;
  private readonly videoMedia: VideoMediaService;
  private readonly captions: CaptionsService;
  private readonly thumbnails: ThumbnailsService;
  private readonly secret: string;
  private readonly db: Kysely<DB>;

  constructor(
    database: Database,
    private readonly config: Config,
  ) {
    const db: Kysely<DB> = database.db;
    this.db = db;
    this.repo = new WatchRepository(db);
    this.players = new PlayersService(db);
    this.events = new EventsService(db, config.listDefaultCap);
    this.ipRanges = new IpRangesService(db);
    this.live = new LiveRepository(db);
    this.videoMedia = new VideoMediaService(db, createMedia(config));
    this.captions = createCaptionsService({ database, config });
    this.thumbnails = createThumbnailsService({ database, config });
    this.secret = config.signingSecret!;
  }

  watchUrl(uuid: string): string {
    return `${this.config.publicUrl}/watch/${uuid}`;
  }

  embedUrl(uuid: string): string {
    return `${this.config.publicUrl}/embed/${uuid}`;
  }

  /** What `GET /watch/:uuid` or `GET /embed/:uuid` shows this visitor (or, with a code typed in, grants). */
  async page(kind: PageKind, uuid: string, visitor: Visitor): Promise<PageOutcome> {
    const player = UUID.test(uuid) ? await this.repo.findPlayer(uuid.toLowerCase()) : undefined;
    if (!player) return { kind: 'refused', refusal: NOT_FOUND };
    if (await this.ipRanges.isBlocked(player.organization_id, visitor.ip)) {
      return { kind: 'refused', refusal: { status: 403, title: 'Not available', message: 'This video is not available from your network.' } };
    }
    const now = nowSeconds();
    if (!released(player, now)) {
      return { kind: 'refused', refusal: { status: 403, title: 'Not released yet', message: `This video will be available from ${new Date(player.release_date * 1000).toUTCString()}.` } };
    }
    if (expired(player, now)) {
      return { kind: 'refused', refusal: { status: 410, title: 'Video expired', message: 'This video is no longer available.' } };
    }
    const access = await this.repo.findAccessManager(player.id);
    let frameAncestors: string[] | null = null;
    if (kind === 'embed') {
      if (!player.embed_enabled) {
        return { kind: 'refused', refusal: { status: 403, title: 'Embedding disabled', message: 'This video cannot be embedded. Watch it on its own page instead.' } };
      }
      frameAncestors = this.embedDomains(player, access);
      const from = hostOf(visitor.referer);
      const ownHost = hostOf(this.config.publicUrl);
      if (frameAncestors && from && from !== ownHost && !domainAllows(frameAncestors, from)) {
        return { kind: 'refused', refusal: { status: 403, title: 'Embedding not allowed here', message: 'This video cannot be embedded on this site.' } };
      }
    }
    let approvalMessage: string | null = null;
    if (player.access_code) {
      const gate = await this.checkAccessCode(player, access, visitor);
      if (gate) return gate;
      approvalMessage = access?.enabled ? access.custom_approval_message : null;
    }
    return { kind: 'page', view: await this.view(kind, player, frameAncestors, approvalMessage) };
  }

  /** The domains allowed to embed: the player's list and, when enabled, its access manager's; null when neither restricts. */
  private embedDomains(player: WatchPlayerRow, access: WatchAccessRow | undefined): string[] | null {
    const domains = parseStringList(player.whitelisted_embed_domains).map((d) => d.toLowerCase().replace(/\.$/, ''));
    if (access?.whitelisted_domains_enabled) domains.push(...parseStringList(access.whitelisted_domains));
    const cleaned = [...new Set(domains.filter((d) => /^[a-z0-9.-]+$/.test(d) && d.includes('.')))];
    return cleaned.length > 0 ? cleaned : null;
  }

  private grantFor(player: WatchPlayerRow): string {
    return createHmac('sha256', this.secret).update(`access:${player.uuid}:${player.access_code}`).digest('base64url');
  }

  /** null: the visitor may watch. Otherwise what to answer: a form, a refusal, or a grant to remember. */
  private async checkAccessCode(player: WatchPlayerRow, access: WatchAccessRow | undefined, visitor: Visitor): Promise<PageOutcome | null> {
    if (sameSecret(visitor.cookies[accessCookieName(player.uuid)] ?? '', this.grantFor(player))) return null;
    const denial = (access?.enabled && access.custom_denial_message) || 'The access code is not correct.';
    if (visitor.accessCode === undefined) {
      return { kind: 'refused', refusal: { status: 403, title: 'Access code required', message: 'Enter the access code to watch this video.', askCode: true } };
    }
    if (!sameSecret(visitor.accessCode.trim(), player.access_code!)) {
      return { kind: 'refused', refusal: { status: 403, title: 'Access code required', message: denial, askCode: true } };
    }
    if (access?.enabled && !(await this.repo.countAccessCodeUse(access.id, access.max_access_code_uses))) {
      return { kind: 'refused', refusal: { status: 403, title: 'Access code used up', message: 'This access code has been used as often as it may be.' } };
    }
    return { kind: 'granted', cookie: { name: accessCookieName(player.uuid), value: this.grantFor(player) } };
  }

  private async view(kind: PageKind, player: WatchPlayerRow, frameAncestors: string[] | null, approvalMessage: string | null): Promise<PageView> {
    const org = player.organization_id;
    // Chapters come in position order (ChaptersRepository.forPlayers).
    const { chapters_attributes: ordered } = await this.players.withChapters(player);
    const { rows: eventRows } = await this.events.listRows(
      { organizationId: org, playerId: player.id, includeDefaults: true },
      { limit: 1000, offset: 0, page: 1, perPage: 1000, paged: false },
    );
    const shown = eventRows.filter((e) => e.state !== 'draft');
    const defaults = shown.filter((e) => e.chapter_id === null).map(toPageEvent);
    const liveInstance = await this.live.findByPlayerUuid(player.uuid);
    const chapters: PageChapter[] = [];
    for (const [index, chapter] of ordered.entries()) {
      const video = chapter.video_attributes;
      const events = shown.filter((e) => e.chapter_id === chapter.id).map(toPageEvent);
      // Organization defaults play on every player: once, on its first chapter.
      if (index === 0) events.push(...defaults);
      events.sort((a, b) => (a.second === -1 ? Infinity : a.second) - (b.second === -1 ? Infinity : b.second) || a.id - b.id);
      chapters.push({ position: chapter.position, name: video?.name ?? `Chapter ${index + 1}`, description: video?.description ?? null, ...(await this.media(org, video?.id, video?.status ?? null, liveInstance, player)), events });
    }
    const poster = await this.poster(org, player.uuid);
    const embedCode = player.embed_enabled && player.embed_button ? this.iframe(player.uuid, player.name, player.width, player.height) : null;
    return {
      kind,
      uuid: player.uuid,
      name: player.name,
      description: player.description ?? ordered[0]?.video_attributes?.description ?? null,
      organizationName: player.organization_name,
      watchUrl: this.watchUrl(player.uuid),
      embedUrl: this.embedUrl(player.uuid),
      poster,
      width: player.width,
      height: player.height,
      frameAncestors,
      sharingPage: Boolean(player.sharing_page),
      shareLink: player.viral_sharing ? (player.custom_sharing_link ?? this.watchUrl(player.uuid)) : null,
      embedCode,
      approvalMessage,
      settings: {
        autoplay: Boolean(player.autoplay),
        mute_onload: Boolean(player.mute_onload),
        play_button: Boolean(player.play_button),
        splash_screen_fade: Boolean(player.splash_screen_fade),
        playlist_always_open: Boolean(player.playlist_always_open),
        default_hd: Boolean(player.default_hd),
        color: player.color,
        playlist_color: player.playlist_color,
        redirect_url: player.redirect_url,
        redirect_whole_page: Boolean(player.redirect_whole_page),
      },
      chapters,
    };
  }

  /** What a chapter plays: the video's files once ready, the broadcast while the player's live instance airs. */
  private async media(
    org: number,
    videoId: number | undefined,
    status: string | null,
    liveInstance: Awaited<ReturnType<LiveRepository['findByPlayerUuid']>>,
    player: WatchPlayerRow,
  ): Promise<Pick<PageChapter, 'state' | 'sources' | 'captions'>> {
    if (videoId === undefined) return { state: 'unavailable', sources: [], captions: [] };
    if (liveInstance && liveInstance.video_id === videoId && liveInstance.status !== 'unaired' && status !== 'ready') {
      return { state: 'live', sources: [{ src: `${this.config.publicUrl}/live/${player.uuid}/index.m3u8`, type: 'application/vnd.apple.mpegurl', quality: 'live' }], captions: [] };
    }
    if (status !== 'ready') return { state: status === 'error' ? 'unavailable' : 'processing', sources: [], captions: [] };
    const { urls } = await this.videoMedia.files(org, videoId);
    const order = player.default_hd ? (['hd', 'sd'] as const) : (['sd', 'hd'] as const);
    const sources = order.flatMap((quality) => (urls[quality] ? [{ src: urls[quality]!, type: 'video/mp4', quality }] : []));
    const captions = (await this.captions.published(org, videoId))
      .filter((c) => c.vtt_url)
      .map((c) => ({ src: c.vtt_url!, srclang: c.language, label: c.localized_language_name || c.formatted_language_name || c.language, default: c.is_default }));
    return { state: sources.length > 0 ? 'ready' : 'unavailable', sources, captions };
  }

  private async poster(org: number, uuid: string): Promise<string | null> {
    const selected = await this.thumbnails.playerSelected(org, { uuid });
    return selected[0]?.thumbnail.url ?? null;
  }

  /** Fixed-size embed code (the v1 oEmbed and the share page's embed button). */
  iframe(uuid: string, title: string, width: number, height: number): string {
    return `<iframe src="${escapeHtml(this.embedUrl(uuid))}" width="${width}" height="${height}" title="${escapeHtml(title)}" frameborder="0" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe>`;
  }

  /** Responsive embed code (v1.1): the frame fills its container's width at the player's aspect ratio. */
  responsiveIframe(uuid: string, title: string, width: number, height: number): string {
    const ratio = ((height / width) * 100).toFixed(4).replace(/\.?0+$/, '');
    return `<div style="position:relative;width:100%;max-width:${width}px;"><div style="position:relative;padding-top:${ratio}%;"><iframe src="${escapeHtml(this.embedUrl(uuid))}" title="${escapeHtml(title)}" style="position:absolute;top:0;left:0;width:100%;height:100%;border:0;" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe></div></div>`;
  }

  /**
   * The oEmbed description of a watch or embed URL of this service (any of its hosts, or one of the
   * organization's own domains). `responsive` (v1.1) gives embed code that fills its container.
   */
  async oembed(query: OembedQuery, responsive: boolean): Promise<OembedOutcome> {
    let url: URL;
    try {
      url = new URL(query.url);
    } catch {
      return { kind: 'not_found' };
    }
    const match = UUID_PATH.exec(url.pathname);
    if (!match || (url.protocol !== 'http:' && url.protocol !== 'https:')) return { kind: 'not_found' };
    const player = await this.repo.findPlayer(match[2].toLowerCase());
    if (!player) return { kind: 'not_found' };
    const org = await this.orgDomains(player);
    const hosts = [hostOf(this.config.publicUrl), this.config.playbackDomain, this.config.embedDomain, ...org].map((h) => h?.toLowerCase().replace(/:\d+$/, ''));
    if (!hosts.includes(url.hostname.toLowerCase())) return { kind: 'not_found' };
    if (!player.embed_enabled) return { kind: 'forbidden', message: 'This video cannot be embedded' };
    const now = nowSeconds();
    if (!showing(player, now)) return { kind: 'not_found' };
    const size = fitInto(player.width, player.height, query.maxwidth, query.maxheight);
    const poster = await this.poster(player.organization_id, player.uuid);
    return {
      kind: 'ok',
      oembed: {
        version: '1.0',
        type: 'video',
        provider_name: 'Reelbase',
        provider_url: this.config.publicUrl,
        title: player.name,
        author_name: player.organization_name,
        html: responsive ? this.responsiveIframe(player.uuid, player.name, size.width, size.height) : this.iframe(player.uuid, player.name, size.width, size.height),
        width: size.width,
        height: size.height,
        // Thumbnails are frames of the video, shown at the player's size.
        ...(poster ? { thumbnail_url: poster, thumbnail_width: size.width, thumbnail_height: size.height } : {}),
      },
    };
  }

  /**
   * A viewer's report from the player script, sent to the organization's analytics webhooks that
   * subscribed to its type. Answers false when there is nothing to report it about (an unknown
   * player or chapter, a blocked address, a player out of its release window); a report missing
   * what its type needs is a 422.
   */
  async report(uuid: string, ip: string, beacon: AnalyticsBeacon): Promise<boolean> {
    if (!UUID.test(uuid)) return false;
    const required = { view: 'percent_watched', identified_view: 'email', attention_span: 'buckets' } as const;
    const field = required[beacon.type];
    if (beacon[field] === undefined) throw invalidField(field, `is required for ${beacon.type}`);
    const player = await this.repo.findPlayer(uuid.toLowerCase());
    if (!player || (await this.ipRanges.isBlocked(player.organization_id, ip))) return false;
    const now = nowSeconds();
    if (!showing(player, now)) return false;
    // Chapters come in position order (ChaptersRepository.forPlayers), as the page lists them.
    const chapter = (await this.players.withChapters(player)).chapters_attributes[beacon.chapter];
    if (!chapter) return false;
    const fields: Record<string, unknown> = {
      visitor_vidyard_uuid: beacon.visitor_uuid,
      player_uuid: player.uuid,
      player_name: player.name,
      video_id: chapter.video_id,
      video_name: chapter.video_attributes?.name ?? null,
      player_load_id: beacon.player_load_id,
    };
    if (beacon.type === 'view') Object.assign(fields, { percent_watched: beacon.percent_watched, embed_url: beacon.embed_url ?? this.watchUrl(player.uuid) });
    if (beacon.type === 'identified_view') fields.email = beacon.email!.toLowerCase();
    if (beacon.type === 'attention_span') fields.attention_span = { bucket_count: 20, buckets: beacon.buckets };
    await this.db.transaction().execute((trx) => notifyWebhooks(trx, player.organization_id, 'analytics', beacon.type, fields));
    return true;
  }

  private async orgDomains(player: WatchPlayerRow): Promise<string[]> {
    const org = await this.repo.organizationDomains(player.organization_id);
    return [org?.embed_domain, org?.secure_embed_domain, org?.playback_domain].filter((d): d is string => Boolean(d));
  }
}
