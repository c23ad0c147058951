import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import { enqueue } from '../job-kinds.ts';
import { nowSeconds } from '../../lib/time.ts';
import { newUuid } from '../../lib/tokens.ts';
import type { Media } from '../../media/media.ts';
import type { PipelineResult } from '../../media/pipeline.ts';
import type { VideosRepository, VideoRow } from './videos.repository.ts';
import type { VideoMediaRepository, VideoFileSetRow } from './video-media.repository.ts';
import type { RegisterFileSetBody, VideoFileSet } from './videos.schemas.ts';
import { toVideo } from './videos.service.ts';
import { enqueueDelete, videoPrefix, type VideoFilesPayload, type VideoProcessPayload, type VideoWebhookPayload } from './video-jobs.ts';

const nonce = () => randomBytes(4).toString('hex');

/** Folders holding the given keys (each file set lives in a folder of its own). */
const foldersOf = (keys: Array<string | null>) => [...new Set(keys.filter((k): k is string => !!k).map((k) => path.posix.dirname(k)))];

/** The video_files row of a run's HLS ladder (quality `hls`, its master playlist; bytes: the whole ladder). */
function hlsRow(result: PipelineResult, key: string, now: number) {
  const top = result.hls.variants[0];
  return { quality: 'hls', path: key, width: top.width, height: top.height, bytes: 0, content_type: 'application/vnd.apple.mpegurl', created_at: now };
}

export function toFileSet(row: VideoFileSetRow): VideoFileSet {
  return {
    id: row.video_id,
    custom_identifier: row.custom_identifier,
    sd_url: row.sd_url,
    hd_url: row.hd_url,
    status: row.status,
    error_message: row.error_message,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * The rules of a video's media: what GET …/files answers, custom file sets, and the state changes
 * the processing jobs make (only the job of the video's current source version may publish).
 */
export class VideoMediaService {
  constructor(
    private readonly db: Kysely<DB>,
    readonly media: Media,
    private readonly repo: VideoMediaRepository,
    private readonly videos: VideosRepository,
  ) {}

  private async video(organizationId: number, id: number): Promise<VideoRow> {
    const row = await this.videos.find(organizationId, id);
    if (!row) throw notFound('video', id);
    return row;
  }

  /**
   * `{id, urls: {sd, hd}}`: signed URLs of the set without identifier (or the named one); null where
   * a rendition is missing and while the video (or the custom set) is not ready (DESIGN §3).
   */
  async files(organizationId: number, id: number, customIdentifier?: string) {
    const keys = await this.playableKeys(organizationId, id, customIdentifier);
    const now = nowSeconds();
    const urlOf = (key: string | null) => (key ? this.media.fileUrl(key, now) : null);
    // The ladder's master playlist names its rungs relatively: a folder link admits them all.
    const hls = keys.hls ? this.media.folderUrl(path.posix.dirname(keys.hls), path.posix.basename(keys.hls), now) : null;
    return { id, urls: { sd: urlOf(keys.sd), hd: urlOf(keys.hd), hls } };
  }

  /**
   * The store keys of a ready video's sd and hd files (of the custom set `customIdentifier`, when
   * given), null while not ready: what a player page plays, and what the API's signed URLs name.
   */
  async playableKeys(organizationId: number, id: number, customIdentifier?: string): Promise<{ sd: string | null; hd: string | null; hls: string | null }> {
    const row = await this.video(organizationId, id);
    const ready = customIdentifier === undefined ? row.status === 'ready' : (await this.repo.findSet(id, customIdentifier))?.status === 'ready';
    const files = ready ? await this.repo.files(id, customIdentifier ?? null) : [];
    const keyOf = (quality: string) => files.find((f) => f.quality === quality)?.path ?? null;
    return { sd: keyOf('sd'), hd: keyOf('hd'), hls: keyOf('hls') };
  }

  /** Registers (or replaces) a custom file set: its renditions are fetched by a `video.files` job. */
  async registerSet(organizationId: number, id: number, body: RegisterFileSetBody): Promise<VideoFileSet> {
    if (!body.sd_url && !body.hd_url) throw invalidField('sd_url', 'is required (or hd_url)');
    return this.db.transaction().execute(async (trx) => {
      const video = await this.videos.with(trx).find(organizationId, id);
      if (!video) throw notFound('video', id);
      const set = await this.repo
        .with(trx)
        .upsertSet(organizationId, id, body.custom_identifier, { sd_url: body.sd_url ?? null, hd_url: body.hd_url ?? null }, nowSeconds());
      await enqueue(trx, 'video.files', { setId: set.id, version: set.version });
      return toFileSet(set);
    });
  }

  async listSets(organizationId: number, id: number): Promise<VideoFileSet[]> {
    await this.video(organizationId, id);
    return (await this.repo.sets(id)).map(toFileSet);
  }

  /** Removes a custom file set and its files. */
  async deleteSet(organizationId: number, id: number, customIdentifier: string): Promise<VideoFileSet> {
    const { set, old } = await this.db.transaction().execute(async (trx) => {
      const video = await this.videos.with(trx).find(organizationId, id);
      if (!video) throw notFound('video', id);
      const repo = this.repo.with(trx);
      const found = await repo.findSet(id, customIdentifier);
      if (!found) throw notFound('file set');
      const removed = await repo.replaceFiles(id, customIdentifier, []);
      await repo.deleteSet(found.id);
      return { set: found, old: removed };
    });
    await this.removeFolders(foldersOf(old.map((f) => f.path)));
    return toFileSet(set);
  }

  // ---- the HLS backfill (`reelbase media backfill-hls`) ----

  /** Queues a `video.hls` job for every ready video without a ladder (of one organization, or all); answers how many. */
  async queueLadderBackfill(organizationId?: number): Promise<number> {
    const videos = await this.repo.withoutLadder(organizationId);
    await this.db.transaction().execute(async (trx) => {
      for (const v of videos) await enqueue(trx, 'video.hls', { videoId: v.id });
    });
    return videos.length;
  }

  /**
   * What a backfill encodes from: the uploaded original when there is one, else the hd file; and the
   * run folder the ladder joins. Undefined when the video is gone, not ready, or has its ladder.
   */
  async ladderSource(videoId: number): Promise<{ uuid: string; source: string; hdKey: string; folder: string } | undefined> {
    const video = await this.repo.findVideo(videoId);
    if (video?.status !== 'ready') return undefined;
    const files = await this.repo.files(videoId, null);
    const hd = files.find((f) => f.quality === 'hd');
    if (!hd || files.some((f) => f.quality === 'hls')) return undefined;
    const original = `${videoPrefix(video.uuid)}/original`;
    const source = (await this.media.store.stat(original)) ? original : hd.path;
    return { uuid: video.uuid, source, hdKey: hd.path, folder: path.posix.dirname(hd.path) };
  }

  /** Records a backfilled ladder; false (and the caller removes it) when the video changed meanwhile. */
  addLadder(videoId: number, hdKey: string, key: string, variants: PipelineResult['hls']['variants']): Promise<boolean> {
    const top = variants[0];
    return this.repo.addLadder(videoId, hdKey, {
      quality: 'hls',
      path: key,
      width: top.width,
      height: top.height,
      bytes: 0,
      content_type: 'application/vnd.apple.mpegurl',
      created_at: nowSeconds(),
    });
  }

  // ---- processing (called by the jobs) ----

  startProcessing(payload: VideoProcessPayload): Promise<VideoRow | undefined> {
    return this.repo.startProcessing(payload.videoId, payload.version, nowSeconds());
  }

  /** Whether this job's version is still the one being processed (a new source or a deletion ends it). */
  async stillCurrent(payload: VideoProcessPayload): Promise<boolean> {
    const video = await this.repo.findVideo(payload.videoId);
    return video?.media_version === payload.version && video.status === 'processing';
  }

  /** Where this run's files go in the store. */
  newRunFolder(video: VideoRow, version: number): string {
    return `${videoPrefix(video.uuid)}/r${version}-${nonce()}`;
  }

  /**
   * Publishes a finished run: renditions and generated thumbnails replace the previous ones, the
   * video becomes ready, its webhook is queued; then the previous files are removed. Answers false
   * (and removes this run's files) when the video changed source or was deleted meanwhile.
   */
  async completeProcessing(
    payload: VideoProcessPayload,
    folder: string,
    result: PipelineResult,
    keys: { renditions: string[]; thumbnails: string[]; hls: string },
  ): Promise<boolean> {
    const now = nowSeconds();
    const old = await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const video = await repo.finishProcessing(
        payload.videoId,
        payload.version,
        {
          status: 'ready',
          error_message: null,
          seconds: Math.max(1, Math.round(result.probe.duration)),
          width: result.probe.width,
          height: result.probe.height,
        },
        now,
      );
      if (!video) return null;
      const oldFiles = await repo.replaceFiles(video.id, null, [
        ...result.renditions.map((r, i) => ({
          quality: r.quality,
          path: keys.renditions[i],
          width: r.width,
          height: r.height,
          bytes: r.bytes,
          content_type: 'video/mp4',
          created_at: now,
        })),
        hlsRow(result, keys.hls, now),
      ]);
      const oldThumbnails = await repo.replaceGeneratedThumbnails(
        video.id,
        result.thumbnails.map((t, i) => ({
          organization_id: video.organization_id,
          video_id: video.id,
          uuid: newUuid(),
          kind: 'generated',
          path: keys.thumbnails[i],
          url: null,
          millisecond: t.millisecond,
          width: t.width,
          height: t.height,
          created_at: now,
          updated_at: now,
        })),
      );
      await this.queueWebhook(trx, video);
      return [...oldFiles.map((f) => f.path), ...oldThumbnails.map((t) => t.path)];
    });
    if (old === null) {
      await this.removeFolders([folder]);
      return false;
    }
    await this.removeFolders(foldersOf(old).filter((f) => f !== folder));
    return true;
  }

  /**
   * The video fails with `message` (this version only) and its webhook is queued. Files of an
   * earlier source no longer describe the video: they are removed.
   */
  async failProcessing(payload: VideoProcessPayload, message: string): Promise<void> {
    const old = await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const video = await repo.finishProcessing(payload.videoId, payload.version, { status: 'error', error_message: message }, nowSeconds());
      if (!video) return [];
      await this.queueWebhook(trx, video);
      const files = await repo.replaceFiles(video.id, null, []);
      const thumbnails = await repo.replaceGeneratedThumbnails(video.id, []);
      return [...files.map((f) => f.path), ...thumbnails.map((t) => t.path)];
    });
    await this.removeFolders(foldersOf(old));
  }

  private async queueWebhook(trx: Kysely<DB>, video: VideoRow): Promise<void> {
    if (!video.webhook_url) return;
    const payload: VideoWebhookPayload = { videoId: video.id, organizationId: video.organization_id, url: video.webhook_url, video: toVideo(video) };
    await enqueue(trx, 'video.webhook', payload);
  }

  // ---- custom file sets (called by the jobs) ----

  /** The set and its video when this version is still the one to fetch. */
  async pendingSet(payload: VideoFilesPayload): Promise<{ set: VideoFileSetRow; video: VideoRow } | undefined> {
    const set = await this.repo.findSetById(payload.setId);
    if (!set || set.version !== payload.version || set.status !== 'processing') return undefined;
    const video = await this.repo.findVideo(set.video_id);
    return video ? { set, video } : undefined;
  }

  newSetFolder(video: VideoRow, set: VideoFileSetRow): string {
    return `${videoPrefix(video.uuid)}/sets/${set.id}-${set.version}-${nonce()}`;
  }

  async completeSet(
    payload: VideoFilesPayload,
    folder: string,
    files: Array<{ quality: 'sd' | 'hd'; key: string; width: number; height: number; bytes: number; contentType: string }>,
  ): Promise<boolean> {
    const now = nowSeconds();
    const old = await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const set = await repo.finishSet(payload.setId, payload.version, { status: 'ready', error_message: null }, now);
      if (!set) return null;
      const replaced = await repo.replaceFiles(
        set.video_id,
        set.custom_identifier,
        files.map((f) => ({
          quality: f.quality,
          path: f.key,
          width: f.width,
          height: f.height,
          bytes: f.bytes,
          content_type: f.contentType,
          created_at: now,
        })),
      );
      return replaced.map((f) => f.path);
    });
    if (old === null) {
      await this.removeFolders([folder]);
      return false;
    }
    await this.removeFolders(foldersOf(old).filter((f) => f !== folder));
    return true;
  }

  async failSet(payload: VideoFilesPayload, message: string): Promise<void> {
    await this.repo.finishSet(payload.setId, payload.version, { status: 'error', error_message: message }, nowSeconds());
  }

  /** Removes folders from the store; failures are left to a `media.delete` job. */
  async removeFolders(prefixes: string[]): Promise<void> {
    const failed: string[] = [];
    for (const prefix of prefixes) {
      try {
        await this.media.store.delete(prefix);
      } catch {
        failed.push(prefix);
      }
    }
    if (failed.length > 0) await enqueueDelete(this.db, failed);
  }
}
