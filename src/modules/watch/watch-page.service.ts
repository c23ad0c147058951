import type { Config } from '../../config.ts';
import type { CaptionsService } from '../captions/captions.service.ts';
import type { EventRow } from '../events/events.repository.ts';
import type { EventsService } from '../events/events.service.ts';
import type { LiveRepository } from '../live/live.repository.ts';
import type { PlayersService } from '../players/players.service.ts';
import type { ThumbnailsService } from '../thumbnails/thumbnails.service.ts';
import type { VideoMediaService } from '../videos/video-media.service.ts';
import type { EmbedCode } from './embed-code.ts';
import { gatePlan, isEmailGate, isOpen, OPEN, type GatePlan } from './gate-plan.ts';
import type { PlaybackGrants } from './playback-grants.ts';
import type { WatchPlayerRow } from './watch.repository.ts';
import { expiryOf, totalSeconds } from './watch-rules.ts';
import type { PageChapter, PageEvent, PageKind, PageView } from './watch-view.ts';

type LiveInstance = Awaited<ReturnType<LiveRepository['findByPlayerUuid']>>;

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

/** Postrolls (second -1) last, then by second and id. */
const byTime = (a: PageEvent, b: PageEvent) => (a.second === -1 ? Infinity : a.second) - (b.second === -1 ? Infinity : b.second) || a.id - b.id;

/** What a page shows of a player the rules let the visitor see: chapters, their media and events, the poster. */
export class WatchPageService {
  constructor(
    private readonly config: Config,
    private readonly embed: EmbedCode,
    private readonly players: PlayersService,
    private readonly events: EventsService,
    private readonly videoMedia: VideoMediaService,
    private readonly captions: CaptionsService,
    private readonly thumbnails: ThumbnailsService,
    private readonly live: LiveRepository,
    private readonly grants: PlaybackGrants,
  ) {}

  /** Where the page's media is fetched, with the viewer's grant (PlaybackService serves it). */
  private playbackBase(player: WatchPlayerRow, grant: string): string {
    return `${this.config.publicUrl}/play/${player.uuid}/${grant}`;
  }

  /** The player's chapters (in position order), each one's public events, and what its email gate holds back. */
  private async plan(player: WatchPlayerRow) {
    const { chapters_attributes: ordered } = await this.players.withChapters(player);
    const { rows } = await this.events.listRows(
      { organizationId: player.organization_id, playerId: player.id, includeDefaults: true },
      { limit: 1000, offset: 0, page: 1, perPage: 1000, paged: false },
    );
    const shown = rows.filter((e) => e.state !== 'draft');
    const defaults = shown.filter((e) => e.chapter_id === null).map(toPageEvent);
    const eventsOf = ordered.map((chapter, index) => {
      const events = shown.filter((e) => e.chapter_id === chapter.id).map(toPageEvent);
      if (index === 0) events.push(...defaults);
      return events.sort(byTime);
    });
    return { ordered, eventsOf, gate: gatePlan(eventsOf) };
  }

  /** What the email gate holds back from a visitor who has not passed it, and each chapter's video (PlaybackService). */
  async gate(player: WatchPlayerRow): Promise<{ plan: GatePlan; videoIds: Array<number | null> }> {
    const { ordered, gate } = await this.plan(player);
    return { plan: gate, videoIds: ordered.map((c) => c.video_attributes?.id ?? null) };
  }

  /**
   * What the page shows this visitor, with the media links of a playback grant issued at `now`.
   * `gatePassed`: the visitor passed the player's email gate (its cookie), so that the chapters
   * behind it carry their media; else the grant says it is short of the gate, and admits only what
   * the page shows (docs/watch.md).
   */
  async view(
    kind: PageKind,
    player: WatchPlayerRow,
    now: number,
    frameAncestors: string[] | null,
    approvalMessage: string | null,
    gatePassed = false,
  ): Promise<PageView> {
    const planned = await this.plan(player);
    const plan = gatePassed ? OPEN : planned.gate;
    // Past every rule: the page's media links carry a grant to this player.
    const grant = this.grants.issue(player, kind, now, !isOpen(plan));
    const { ordered, eventsOf } = planned;
    const thumbnailKeys = await this.thumbnails.storedKeys(player.organization_id, player.uuid);
    const chapters = await this.chapters(player, grant, ordered, eventsOf, thumbnailKeys, plan);
    const hasGate = eventsOf.some((events) => events.some(isEmailGate));
    const embedCode = player.embed_enabled && player.embed_button ? this.embed.iframe(player.uuid, player.name, player.width, player.height) : null;
    const posterKey: string | null = thumbnailKeys.values().next().value ?? null;
    return {
      kind,
      uuid: player.uuid,
      name: player.name,
      description: player.description ?? ordered[0]?.video_attributes?.description ?? null,
      organizationName: player.organization_name,
      watchUrl: this.embed.watchUrl(player.uuid),
      embedUrl: this.embed.embedUrl(player.uuid),
      poster: posterKey ? this.grantedFile(player, grant, posterKey) : null,
      sharePoster: posterKey && !player.access_code ? this.embed.posterUrl(player.uuid) : null,
      duration: totalSeconds(ordered.map((c) => c.video_attributes)),
      releasedAt: player.release_date,
      expiresAt: expiryOf(player),
      width: player.width,
      height: player.height,
      frameAncestors,
      sharingPage: Boolean(player.sharing_page),
      shareLink: player.viral_sharing ? (player.custom_sharing_link ?? this.embed.watchUrl(player.uuid)) : null,
      embedCode,
      approvalMessage,
      emailGate: hasGate ? { passed: gatePassed } : null,
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

  /**
   * Each chapter with what it plays and its public events; organization defaults play once, on the
   * first. The gate `plan` holds back the media of the chapters behind it; the chapter it cuts plays
   * its HLS ladder up to the gate (no MP4 file, which cannot be cut), and nothing without a ladder.
   */
  private async chapters(
    player: WatchPlayerRow,
    grant: string,
    ordered: Awaited<ReturnType<PlayersService['withChapters']>>['chapters_attributes'],
    eventsOf: PageEvent[][],
    thumbnailKeys: Map<number, string>,
    plan: GatePlan,
  ): Promise<PageChapter[]> {
    const org = player.organization_id;
    const liveInstance = await this.live.findByPlayerUuid(player.uuid);
    const chapters: PageChapter[] = [];
    for (const [index, chapter] of ordered.entries()) {
      const video = chapter.video_attributes;
      const of = (withheld: boolean) => this.media(org, video?.id, video?.status ?? null, liveInstance, player, grant, withheld);
      let withheld = index >= plan.withheldFrom;
      let media = await of(withheld);
      if (plan.cut?.index === index && media.state === 'ready') {
        withheld = !media.hls;
        media = withheld ? await of(true) : { ...media, sources: [] };
      }
      const thumbnail = video ? thumbnailKeys.get(video.id) : undefined;
      chapters.push({
        position: chapter.position,
        name: video?.name ?? `Chapter ${index + 1}`,
        description: video?.description ?? null,
        ...media,
        gated: withheld && (media.state === 'ready' || media.state === 'live'),
        gatedAt: plan.cut?.index === index && !withheld && media.state === 'ready' ? plan.cut.second : null,
        thumbnail: thumbnail ? this.grantedFile(player, grant, thumbnail) : null,
        duration: typeof video?.seconds === 'number' && video.seconds > 0 ? video.seconds : null,
        events: eventsOf[index],
      });
    }
    return chapters;
  }

  /**
   * What a chapter plays: the video's files once ready, the broadcast while the player's live
   * instance airs (and what it will be before it does). `withheld`: the chapter is behind an email
   * gate not passed, so no media URL is given.
   */
  private async media(
    org: number,
    videoId: number | undefined,
    status: string | null,
    liveInstance: LiveInstance,
    player: WatchPlayerRow,
    grant: string,
    withheld: boolean,
  ): Promise<Pick<PageChapter, 'state' | 'sources' | 'hls' | 'captions' | 'live'>> {
    const none = { sources: [], hls: null, captions: [] };
    if (videoId === undefined) return { state: 'unavailable', ...none, live: null };
    const base = this.playbackBase(player, grant);
    const broadcast = liveInstance && liveInstance.video_id === videoId && status !== 'ready' ? liveInstance : undefined;
    if (broadcast) {
      const live = { status: broadcast.status, air_date: broadcast.air_date || null, dvr: Boolean(broadcast.dvr_enabled) };
      if (broadcast.status === 'unaired') return { state: 'upcoming', ...none, live };
      if (withheld) return { state: 'live', ...none, live };
      const playlist = `${base}/live/index.m3u8`;
      return { state: 'live', sources: [{ src: playlist, type: 'application/vnd.apple.mpegurl', quality: 'live' }], hls: playlist, captions: [], live };
    }
    if (status !== 'ready') return { state: status === 'error' ? 'unavailable' : 'processing', ...none, live: null };
    const keys = await this.videoMedia.playableKeys(org, videoId);
    const order = player.default_hd ? (['hd', 'sd'] as const) : (['sd', 'hd'] as const);
    const sources = order.flatMap((quality) => {
      const key = keys[quality];
      return key ? [{ src: `${base}/files/${key}`, type: 'video/mp4', quality }] : [];
    });
    if (sources.length === 0) return { state: 'unavailable', ...none, live: null };
    if (withheld) return { state: 'ready', ...none, live: null };
    const captions = (await this.captions.published(org, videoId))
      .filter((c) => c.vtt_url)
      .map((c) => ({
        src: `${base}/captions/${c.id}.vtt`,
        srclang: c.language,
        label: c.localized_language_name || c.formatted_language_name || c.language,
        default: c.is_default,
      }));
    const hls = keys.hls ? `${base}/files/${keys.hls}` : null;
    return { state: 'ready', sources, hls, captions, live: null };
  }

  private grantedFile(player: WatchPlayerRow, grant: string, key: string): string {
    return `${this.playbackBase(player, grant)}/files/${key}`;
  }

  /** The poster, a stored image fetched with the viewer's grant; null when none is stored. */
  async poster(player: WatchPlayerRow, grant: string): Promise<string | null> {
    const key = await this.thumbnails.posterKey(player.organization_id, player.uuid);
    return key ? this.grantedFile(player, grant, key) : null;
  }
}
