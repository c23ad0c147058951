import { AppError, notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { isValidKey, readSmall } from '../../media/file-store.ts';
import { isMaster, subtitlePlaylist, subtitleTracks, withSubtitles } from '../../media/hls.ts';
import { MEDIA_FILES_PATH, MEDIA_SUBTITLES_PATH, type Media } from '../../media/media.ts';
import { servedFile, type ServedFile } from '../../media/served-file.ts';
import type { CaptionsService } from '../captions/captions.service.ts';
import type { IpRangesService } from '../ip-ranges/ip-ranges.service.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';

/** Longest a client may cache a file: never past the link's expiry. */
const MAX_CACHE_SECONDS = 86_400;

/**
 * Stored files by signed URL (what the API hands to its clients): the signature (HMAC over path and
 * expiry) must be valid and unexpired, the file must exist, and the address asking must not be in
 * the owning organization's blocked ranges (a link handed out earlier stops working there too); the
 * HTTP layer then answers it (ranges, conditional requests).
 */
export class MediaFilesService {
  constructor(
    private readonly media: Media,
    private readonly videos: VideosRepository,
    private readonly ipRanges: IpRangesService,
    private readonly captions: CaptionsService,
  ) {}

  async resolve(linkPath: string, expiresParam: unknown, signatureParam: unknown, ip: string): Promise<ServedFile> {
    const now = nowSeconds();
    const expires = this.verifySigned(linkPath, expiresParam, signatureParam, now);
    const key = linkPath.slice(MEDIA_FILES_PATH.length);
    if (!linkPath.startsWith(MEDIA_FILES_PATH) || !isValidKey(key)) throw notFound('file');
    return this.serve(key, ip, expires - now);
  }

  /** A file by folder link (`/media/folders/<token>/<key>`: an HLS ladder's playlists and segments). */
  async resolveFolder(token: string, key: string, ip: string): Promise<ServedFile> {
    const now = nowSeconds();
    const expires = isValidKey(key) ? this.media.signer.verifyFolder(token, key, now) : null;
    if (expires === null) throw new AppError('forbidden', 'The link is invalid or has expired');
    return this.serve(key, ip, expires - now);
  }

  /**
   * A ladder's master playlist by folder link, with the video's published captions as WebVTT
   * subtitle renditions, each by a signed link of its own (`/media/subtitles/<id>.m3u8`).
   */
  async folderMaster(token: string, key: string, ip: string): Promise<string> {
    await this.resolveFolder(token, key, ip);
    const video = isMaster(key) ? await this.videos.findByUuid(key.split('/')[1]) : undefined;
    const master = (await readSmall(this.media.store, key)).toString('utf8');
    if (!video) return master;
    const now = nowSeconds();
    const captions = await this.captions.published(video.organization_id, video.id);
    const tracks = subtitleTracks(captions, (id) => this.media.signer.sign(`${MEDIA_SUBTITLES_PATH}${id}.m3u8`, now));
    return withSubtitles(master, tracks);
  }

  /** A published caption's subtitles playlist by signed link: its WebVTT file (by the caption's signed URL) for the whole video. */
  async subtitles(id: number, expiresParam: unknown, signatureParam: unknown, ip: string): Promise<string> {
    this.verifySigned(`${MEDIA_SUBTITLES_PATH}${id}.m3u8`, expiresParam, signatureParam, nowSeconds());
    const caption = await this.captions.publishedById(id);
    if (await this.ipRanges.isBlocked(caption.organizationId, ip)) throw new AppError('forbidden', 'This file is not available from your network');
    const video = await this.videos.find(caption.organizationId, caption.videoId);
    return subtitlePlaylist(caption.vttUrl, video?.seconds ?? 1);
  }

  private async serve(key: string, ip: string, secondsLeft: number): Promise<ServedFile> {
    // Every stored file lives in its video's folder: videos/<video uuid>/…
    const organizationId = await this.videos.organizationOfUuid(key.split('/')[1] ?? '');
    if (organizationId !== undefined && (await this.ipRanges.isBlocked(organizationId, ip))) {
      throw new AppError('forbidden', 'This file is not available from your network');
    }
    const stat = await this.media.store.stat(key);
    if (!stat) throw notFound('file');
    return servedFile(this.media.store, key, stat, Math.min(MAX_CACHE_SECONDS, secondsLeft));
  }

  /** The link's expiry, once its signature is found valid and unexpired. */
  private verifySigned(linkPath: string, expiresParam: unknown, signatureParam: unknown, now: number): number {
    const expires = typeof expiresParam === 'string' && /^\d{1,12}$/.test(expiresParam) ? Number(expiresParam) : NaN;
    const signature = typeof signatureParam === 'string' ? signatureParam : '';
    if (!signature || !this.media.signer.verify(linkPath, expires, signature, now)) {
      throw new AppError('forbidden', 'The link is invalid or has expired');
    }
    return expires;
  }
}
