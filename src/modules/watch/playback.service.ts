import type { Readable } from 'node:stream';
import { AppError, notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { isValidKey, readSmall } from '../../media/file-store.ts';
import { contentTypeOf } from '../../media/content-types.ts';
import { cutPlaylist, isMaster, subtitlePlaylist, subtitleTracks, withSubtitles } from '../../media/hls.ts';
import type { Media } from '../../media/media.ts';
import { servedFile, type ServedFile } from '../../media/served-file.ts';
import type { CaptionFile, CaptionsService } from '../captions/captions.service.ts';
import type { LivePlaybackService } from '../live/live-playback.service.ts';
import type { PlayersService } from '../players/players.service.ts';
import type { ThumbnailsService } from '../thumbnails/thumbnails.service.ts';
import type { Audience } from './audience.ts';
import { allowanceOf, type Allowance } from './gate-plan.ts';
import type { PlaybackGrants } from './playback-grants.ts';
import type { WatchPageService } from './watch-page.service.ts';
import type { WatchPlayerRow, WatchRepository } from './watch.repository.ts';
import { UUID } from './watch-rules.ts';

/** Longest a viewer's browser keeps a media file: the rules may change (a range blocked, a code set). */
const MAX_CACHE_SECONDS = 3600;

/**
 * Every byte of a player's media that its pages link to (video files, poster, captions, live HLS),
 * served only to a viewer who carries a valid playback grant of that player (docs/watch.md), and only
 * while the page's rules still let that viewer in.
 */
export class PlaybackService {
  constructor(
    private readonly repo: WatchRepository,
    private readonly grants: PlaybackGrants,
    private readonly audience: Audience,
    private readonly players: PlayersService,
    private readonly captions: CaptionsService,
    private readonly live: LivePlaybackService,
    private readonly media: Media,
    private readonly thumbnails: ThumbnailsService,
    private readonly pages: WatchPageService,
  ) {}

  /**
   * The player, when the grant is its own, valid and unexpired, and the rules let this address in
   * now; with `allowance`, how much of one of its videos the grant admits (all of it, unless the
   * grant was issued short of the player's email gate: then what the page showed).
   */
  private async admit(uuid: string, grant: string, ip: string): Promise<{ player: WatchPlayerRow; allowance: (videoId: number) => Allowance }> {
    const player = UUID.test(uuid) ? await this.repo.findPlayer(uuid.toLowerCase()) : undefined;
    if (!player) throw notFound('video');
    const now = nowSeconds();
    const verified = this.grants.verify(player, grant, now);
    if (!verified) throw new AppError('forbidden', 'This playback link is not valid or has expired: open the video page again');
    const refusal = await this.audience.refusal(player, ip, now);
    if (refusal) throw new AppError('forbidden', refusal.message);
    if (verified.kind === 'embed' && !player.embed_enabled) throw new AppError('forbidden', 'This video cannot be embedded');
    const all: Allowance = { kind: 'all' };
    if (!verified.gated) return { player, allowance: () => all };
    // The gate as it is now: one removed meanwhile holds nothing back any more.
    const gate = await this.pages.gate(player);
    return { player, allowance: (videoId) => allowanceOf(gate.plan, gate.videoIds, videoId) };
  }

  private async videosOf(player: WatchPlayerRow) {
    return (await this.players.withChapters(player)).chapters_attributes.flatMap((c) => (c.video_attributes ? [c.video_attributes] : []));
  }

  /** A stored file of one of the player's videos (a rendition, a thumbnail): everything under the video's folder. */
  async file(uuid: string, grant: string, ip: string, key: string): Promise<ServedFile> {
    const { player, allowance } = await this.admit(uuid, grant, ip);
    const videos = await this.videosOf(player);
    // Everything of the video's runs and sets; never its uploaded original (the source, metadata and all),
    // nor its caption files, which a page offers only once published (…/captions/<id>.vtt).
    const servable = (uuid: string) => key.startsWith(`videos/${uuid}/`) && key !== `videos/${uuid}/original` && !key.startsWith(`videos/${uuid}/captions/`);
    const video = isValidKey(key) ? videos.find((v) => servable(v.uuid)) : undefined;
    if (!video || !(await this.allows(allowance(video.id), key))) throw notFound('file');
    const stat = await this.media.store.stat(key);
    if (!stat) throw notFound('file');
    return servedFile(this.media.store, key, stat, MAX_CACHE_SECONDS);
  }

  /**
   * Short of the gate: a held-back video's images only (the page shows its thumbnail); of the
   * chapter the gate cuts, also the segments its cut playlists name (never an MP4 file).
   */
  private async allows(allowance: Allowance, key: string): Promise<boolean> {
    if (allowance.kind === 'all' || contentTypeOf(key).startsWith('image/')) return true;
    if (allowance.kind === 'none') return false;
    const slash = key.lastIndexOf('/');
    const playlist = await this.readPlaylist(`${key.slice(0, slash)}/index.m3u8`);
    return playlist !== null && cutPlaylist(playlist, allowance.second).uris.has(key.slice(slash + 1));
  }

  private async readPlaylist(key: string): Promise<string | null> {
    if (!(await this.media.store.stat(key))) return null;
    return (await readSmall(this.media.store, key)).toString('utf8');
  }

  /**
   * The player's poster at a stable address (`/posters/<uuid>`), for what outlives a page: Open
   * Graph and JSON-LD images, hub cards, sitemaps. No grant, but the same rules at every fetch: not
   * from a blocked network, not outside the release window, nothing behind an access code.
   */
  async poster(uuid: string, ip: string): Promise<ServedFile> {
    const player = UUID.test(uuid) ? await this.repo.findPlayer(uuid.toLowerCase()) : undefined;
    if (!player || player.access_code) throw notFound('poster');
    const refusal = await this.audience.refusal(player, ip, nowSeconds());
    if (refusal) throw new AppError('forbidden', refusal.message);
    const key = await this.thumbnails.posterKey(player.organization_id, player.uuid);
    const stat = key ? await this.media.store.stat(key) : null;
    if (!key || !stat) throw notFound('poster');
    // Short: a new poster or a new rule shows within minutes.
    return servedFile(this.media.store, key, stat, 300);
  }

  /**
   * A playlist of a video's HLS ladder. The master gets the video's published captions as WebVTT
   * subtitle renditions (their playlists sit beside the caption files:
   * `/play/<uuid>/<grant>/captions/<id>.m3u8`); short of a gate at a later second, each rung's
   * playlist ends at the gate.
   */
  async playlist(uuid: string, grant: string, ip: string, key: string): Promise<string> {
    const { player, allowance } = await this.admit(uuid, grant, ip);
    const video = (await this.videosOf(player)).find((v) => key.startsWith(`videos/${v.uuid}/`));
    const allowed = video && isValidKey(key) ? allowance(video.id) : ({ kind: 'none' } as const);
    const text = allowed.kind === 'none' ? null : await this.readPlaylist(key);
    if (!video || text === null) throw notFound('file');
    if (!isMaster(key)) return allowed.kind === 'until' ? cutPlaylist(text, allowed.second).text : text;
    const captions = await this.captions.published(player.organization_id, video.id);
    // From …/files/videos/<video>/<run>/hls/ up to /play/<uuid>/<grant>/.
    const tracks = subtitleTracks(captions, (id) => `../../../../../captions/${id}.m3u8`);
    return withSubtitles(text, tracks);
  }

  /** A subtitles media playlist of a published caption: its WebVTT file for the whole video. */
  async captionPlaylist(uuid: string, grant: string, ip: string, id: number): Promise<string> {
    const { player, allowance } = await this.admit(uuid, grant, ip);
    for (const video of await this.videosOf(player)) {
      if (allowance(video.id).kind === 'none') continue;
      const captions = await this.captions.published(player.organization_id, video.id);
      if (captions.some((c) => c.id === id)) return subtitlePlaylist(`${id}.vtt`, video.seconds ?? 1);
    }
    throw notFound('caption', id);
  }

  /** A published caption of one of the player's videos, as WebVTT. */
  async caption(uuid: string, grant: string, ip: string, id: number): Promise<CaptionFile> {
    const { player, allowance } = await this.admit(uuid, grant, ip);
    const videos: number[] = [];
    for (const video of await this.videosOf(player)) if (allowance(video.id).kind !== 'none') videos.push(video.id);
    return this.captions.publishedVtt(player.organization_id, videos, id);
  }

  async livePlaylist(uuid: string, grant: string, ip: string, nextSegment?: number): Promise<{ text: string; onAir: boolean }> {
    return this.live.playlist(await this.admitLive(uuid, grant, ip), nextSegment);
  }

  async liveSegment(uuid: string, grant: string, ip: string, part: string, segment: string): Promise<{ size: number; stream: Readable }> {
    return this.live.segment(await this.admitLive(uuid, grant, ip), part, segment);
  }

  /** The player's broadcast, unless the gate holds back its chapter (a live chapter is not cut: the gate shows on it). */
  private async admitLive(uuid: string, grant: string, ip: string): Promise<string> {
    const { player, allowance } = await this.admit(uuid, grant, ip);
    const videoId = await this.live.videoIdOf(player.uuid);
    if (videoId !== null && allowance(videoId).kind === 'none') throw notFound('live stream');
    return player.uuid;
  }
}
