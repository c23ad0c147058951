import type { Insertable, Kysely } from 'kysely';
import type { DB, VideosTable } from '../../db/schema.ts';
import { notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import type { FileStore } from '../../media/file-store.ts';
import { nowSeconds } from '../../lib/time.ts';
import { newUuid } from '../../lib/tokens.ts';
import type { CreateVideoBody, UpdateVideoBody, Video } from './videos.schemas.ts';
import { type VideoFilter, type VideosRepository, type VideoRow } from './videos.repository.ts';
import { cancelJobs } from '../job-kinds.ts';
import { enqueueDelete, enqueueProcessing, videoPrefix } from './video-jobs.ts';

export function toVideo(row: VideoRow): Video {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    upload_url: row.upload_url,
    description: row.description,
    sync: Boolean(row.sync),
    audio_gain: row.audio_gain,
    webhook_url: row.webhook_url,
    status: row.status,
    error_message: row.error_message,
    notes: row.notes,
    seconds: row.seconds,
    origin: row.origin,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A new video row; `status` starts null (the media pipeline moves it on). Use VideosService.insert to create one. */
export function newVideoRow(
  organizationId: number,
  attrs: Omit<CreateVideoBody, 'upload_url'> & { upload_url: string | null },
  now: number,
): Insertable<VideosTable> {
  return {
    organization_id: organizationId,
    uuid: newUuid(),
    name: attrs.name.trim() || attrs.name,
    upload_url: attrs.upload_url,
    description: attrs.description ?? null,
    sync: attrs.sync ?? false,
    audio_gain: attrs.audio_gain ?? 0,
    webhook_url: attrs.webhook_url ?? null,
    notes: attrs.notes ?? null,
    status: null,
    error_message: null,
    origin: 'api',
    created_at: now,
    updated_at: now,
  };
}

/** The status of a video whose direct upload has not finished yet. */
export const WAITING_FOR_UPLOAD = 'waiting_for_upload';

const WRITABLE = ['name', 'upload_url', 'description', 'sync', 'audio_gain', 'webhook_url', 'notes'] as const satisfies ReadonlyArray<keyof UpdateVideoBody>;

export class VideosService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly store: FileStore,
    private readonly videos: VideosRepository,
  ) {}

  /**
   * Creates a video and queues its processing, in the caller's transaction: every path that makes a
   * video (POST /v1/videos, nested video_attributes of players and chapters) goes through here.
   * `status` stays null (queued) until a worker starts processing it (docs/media.md).
   */
  async insert(trx: Kysely<DB>, organizationId: number, attrs: CreateVideoBody, now: number): Promise<VideoRow> {
    const video = await this.videos.with(trx).insert(newVideoRow(organizationId, attrs, now));
    await enqueueProcessing(trx, video.id, video.media_version);
    return video;
  }

  /**
   * A video whose source is a direct upload still to come (docs/uploads.md): `waiting_for_upload`,
   * processed once the upload's last byte lands (`sourceUploaded`).
   */
  insertAwaitingUpload(trx: Kysely<DB>, organizationId: number, attrs: Pick<CreateVideoBody, 'name' | 'description'>, now: number): Promise<VideoRow> {
    return this.videos.with(trx).insert({ ...newVideoRow(organizationId, { ...attrs, upload_url: null }, now), status: WAITING_FOR_UPLOAD, origin: 'upload' });
  }

  /** The upload of a waiting video is complete: queued for processing like an upload_url. False when it no longer waits. */
  async sourceUploaded(trx: Kysely<DB>, videoId: number): Promise<boolean> {
    const row = await this.videos.with(trx).moveStatus(videoId, WAITING_FOR_UPLOAD, { status: null, updated_at: nowSeconds() });
    if (!row) return false;
    await enqueueProcessing(trx, row.id, row.media_version);
    return true;
  }

  /** The upload of a waiting video will never complete (it expired): the video ends in `error`. */
  async uploadFailed(trx: Kysely<DB>, videoId: number, message: string): Promise<void> {
    await this.videos.with(trx).moveStatus(videoId, WAITING_FOR_UPLOAD, { status: 'error', error_message: message, updated_at: nowSeconds() });
  }

  async get(organizationId: number, id: number): Promise<Video> {
    const row = await this.videos.find(organizationId, id);
    if (!row) throw notFound('video', id);
    return toVideo(row);
  }

  async list(organizationId: number, filter: VideoFilter, page: Page): Promise<Listing<Video>> {
    // The count first: with it, a page in the later half is read from the end.
    const total = page.paged ? await this.videos.count(organizationId, filter) : null;
    const rows = await this.videos.list(
      organizationId,
      { limit: page.limit, offset: page.offset, query: filter.query, status: filter.status },
      total ?? undefined,
    );
    const items = rows.map(toVideo);
    return { items, total: total ?? items.length };
  }

  async update(organizationId: number, id: number, body: UpdateVideoBody): Promise<Video> {
    return this.db.transaction().execute(async (trx) => {
      const videos = this.videos.with(trx);
      const current = await videos.find(organizationId, id);
      if (!current) throw notFound('video', id);
      const changes: Record<string, unknown> = { updated_at: nowSeconds() };
      // Only the writable attributes (a body may also carry auth_token or unknown keys).
      for (const key of WRITABLE) if (body[key] !== undefined) changes[key] = body[key];
      if (typeof body.name === 'string') changes.name = body.name.trim() || body.name;
      // A new source starts a new version: queued again (status null), processed by a new job; a
      // job still working on the old version cannot publish. The old files play until the new are ready.
      const newSource = body.upload_url !== undefined && body.upload_url !== current.upload_url;
      if (newSource) {
        changes.status = null;
        changes.error_message = null;
        changes.media_version = current.media_version + 1;
      }
      const row = await videos.update(organizationId, id, changes);
      if (!row) throw notFound('video', id);
      if (newSource) {
        // The old source's download and transcode stop at once rather than run to a result nobody keeps.
        await cancelJobs(trx, 'video.process', (payload) => payload.videoId === id && payload.version < row.media_version);
        await enqueueProcessing(trx, row.id, row.media_version);
      }
      return toVideo(row);
    });
  }

  /** Removes a video row in the caller's transaction; answers it as it was. */
  async deleteRow(trx: Kysely<DB>, organizationId: number, id: number): Promise<VideoRow> {
    const deleted = await this.videos.with(trx).delete(organizationId, id);
    if (!deleted) throw notFound('video', id);
    return deleted;
  }

  /**
   * Removes a deleted video's files from the store (call it after the commit); should that fail, a
   * queued `media.delete` job does it.
   */
  async removeFiles(row: VideoRow): Promise<void> {
    const prefix = videoPrefix(row.uuid);
    try {
      await this.store.delete(prefix);
    } catch {
      await enqueueDelete(this.db, [prefix]);
    }
  }
}
