import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Locker } from '@tus/utils';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { sameSecret } from '../../lib/constant-time.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { Media } from '../../media/media.ts';
import { enqueue } from '../job-kinds.ts';
import type { PlayerVideosService } from '../players/player-videos.service.ts';
import { videoPrefix, type UploadedSources } from '../videos/video-jobs.ts';
import type { VideosService } from '../videos/videos.service.ts';
import type { UploadBytes } from './upload-bytes.ts';
import type { CreateUploadBody, Upload } from './uploads.schemas.ts';
import type { UploadRow, UploadsRepository } from './uploads.repository.ts';

/** Why the tus endpoint refuses a request: an unknown or wrong capability, an expired one, or one already used. */
export type UploadRefusal = 'unknown' | 'expired' | 'finished' | 'started';

export class UploadRefused extends Error {
  constructor(readonly reason: UploadRefusal) {
    super(
      {
        unknown: 'No such upload',
        expired: 'This upload expired',
        finished: 'This upload is finished: its URL takes no more bytes',
        started: 'This upload has begun: resume it (HEAD, then PATCH) instead of creating it again',
      }[reason],
    );
  }
}

export interface UploadsOptions {
  publicUrl: string;
  expiryHours: number;
}

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Where a video's uploaded original is kept once processed (removed with the video's folder). */
export const originalKey = (videoUuid: string) => `${videoPrefix(videoUuid)}/original`;

/**
 * Direct uploads (docs/uploads.md). An upload is a capability: its URL holds an id and a secret (only
 * the secret's hash is stored), it takes one tus upload before it expires, and the finished upload
 * becomes the source of a video that waited for it. The bytes live in the tus store until the video's
 * processing keeps them as its original in the media store.
 */
export class UploadsService implements UploadedSources {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: UploadsRepository,
    private readonly playerVideos: PlayerVideosService,
    private readonly videos: VideosService,
    private readonly bytes: UploadBytes,
    private readonly media: Media,
    private readonly locker: Locker,
    private readonly options: UploadsOptions,
  ) {}

  /** A video (with its facade player) that waits for its upload, and the upload's capability URL. */
  create(organizationId: number, body: CreateUploadBody): Promise<Upload> {
    const id = randomBytes(12).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const now = nowSeconds();
    const expiresAt = now + this.options.expiryHours * 3600;
    return this.db.transaction().execute(async (trx) => {
      const { video, player } = await this.playerVideos.createAwaitingUpload(trx, organizationId, {
        name: body.name,
        description: body.description,
        playerName: body.player?.name,
      });
      await this.repo.with(trx).insert({
        id,
        secret_hash: hash(secret),
        organization_id: organizationId,
        video_id: video.id,
        status: 'pending',
        size: null,
        expires_at: expiresAt,
        created_at: now,
        completed_at: null,
      });
      await enqueue(trx, 'upload.expire', { uploadId: id }, { delayMs: (expiresAt - now) * 1000 });
      return { id, url: `${this.options.publicUrl}/uploads/${id}/${secret}`, video_id: video.id, player_uuid: player.uuid, expires_at: expiresAt };
    });
  }

  /**
   * Whether the tus endpoint may serve `method` on this capability; throws UploadRefused. A HEAD on a
   * pending upload whose bytes are all there finishes it (the request that wrote the last byte may
   * have failed before it could).
   */
  async admit(id: string, secret: string, method: string): Promise<void> {
    const row = await this.repo.find(id);
    if (!row || row.video_id === null || !sameSecret(row.secret_hash, hash(secret))) throw new UploadRefused('unknown');
    if (row.status === 'expired' || (row.status === 'pending' && row.expires_at <= nowSeconds())) throw new UploadRefused('expired');
    if (row.status !== 'pending') {
      // A client checking an upload it finished sees it complete (while its bytes are still there).
      if (method === 'HEAD') return;
      throw new UploadRefused('finished');
    }
    const stored = await this.bytes.progress(id);
    if (method === 'POST' && stored && stored.offset > 0) throw new UploadRefused('started');
    if (method === 'HEAD' && stored?.size !== undefined && stored.offset === stored.size) await this.finish(id, stored.size);
  }

  /** The last byte landed: the video is queued for processing (the same pipeline as an upload_url). */
  async finish(id: string, size: number): Promise<void> {
    const unused = await this.db.transaction().execute(async (trx) => {
      const row = await this.repo.with(trx).moveStatus(id, 'pending', { status: 'complete', size, completed_at: nowSeconds() });
      if (!row) return false; // finished already
      if (row.video_id !== null && (await this.videos.sourceUploaded(trx, row.video_id))) return false;
      // The video was deleted or given an upload_url meanwhile: nobody wants these bytes.
      await this.repo.with(trx).moveStatus(id, 'complete', { status: 'discarded' });
      return true;
    });
    if (unused) await this.removeBytes(id);
  }

  /**
   * The `upload.expire` job, at the upload's expiry: an upload still unfinished is refused from then on,
   * its bytes removed and its video failed. Bytes nobody will process are removed too: of an upload gone
   * with its organization, or finished for a video deleted (or given an upload_url) before processing.
   */
  async expire(id: string): Promise<void> {
    const row = await this.repo.find(id);
    if (!row) return this.removeBytes(id);
    if (row.status === 'complete' && !(await this.stillWanted(row))) {
      if (await this.repo.moveStatus(id, 'complete', { status: 'discarded' })) await this.removeBytes(id);
      return;
    }
    // A retry of an expiry whose removal could not yet take the upload from its writer.
    if (row.status === 'expired') return this.removeBytesOfWriter(id);
    if (row.status !== 'pending') return;
    const left = row.expires_at - nowSeconds();
    if (left > 0) {
      await enqueue(this.db, 'upload.expire', { uploadId: id }, { delayMs: left * 1000 });
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      const moved = await this.repo.with(trx).moveStatus(id, 'pending', { status: 'expired' });
      if (moved?.video_id) {
        await this.videos.uploadFailed(trx, moved.video_id, `The upload expired before its last byte arrived (after ${this.options.expiryHours} h)`);
      }
    });
    await this.removeBytesOfWriter(id);
  }

  /**
   * Removes the bytes of an upload a PATCH may still be writing (on any node): the upload's lock is
   * taken first, which asks that request to end, so that nothing is written after the removal. Not
   * getting it (a writer that does not let go) throws, and the job's retry removes them later.
   */
  private async removeBytesOfWriter(id: string): Promise<void> {
    const lock = this.locker.newLock(id);
    await lock.lock(AbortSignal.timeout(60_000), () => Promise.resolve());
    try {
      await this.removeBytes(id);
    } finally {
      await lock.unlock();
    }
  }

  /** Whether a finished upload's video still waits to be processed from it. */
  private async stillWanted(row: UploadRow): Promise<boolean> {
    if (row.video_id === null) return false;
    const video = await this.videos.get(row.organization_id, row.video_id).catch(() => null);
    return video !== null && video.upload_url === null && video.status !== 'error' && video.status !== 'ready';
  }

  // ---- the video pipeline's source (UploadedSources) ----

  async fetch(video: { id: number; uuid: string }, dest: string, signal: AbortSignal): Promise<boolean> {
    const row = await this.repo.sourceOf(video.id);
    if (!row) return false;
    const from = row.status === 'complete' ? await this.bytes.read(row.id) : await this.media.store.createReadStream(originalKey(video.uuid));
    await pipeline(from, fs.createWriteStream(dest), { signal });
    return true;
  }

  async keep(video: { id: number; uuid: string }, file: string): Promise<void> {
    const row = await this.repo.sourceOf(video.id);
    if (row?.status !== 'complete') return;
    await this.media.store.put(originalKey(video.uuid), file);
    await this.repo.moveStatus(row.id, 'complete', { status: 'stored' });
    await this.removeBytes(row.id);
  }

  async discard(video: { id: number }): Promise<void> {
    const row = await this.repo.sourceOf(video.id);
    if (row?.status === 'complete' && (await this.repo.moveStatus(row.id, 'complete', { status: 'discarded' }))) await this.removeBytes(row.id);
  }

  /**
   * Removes what an unfinished upload of undeclared size received once it went past MAX_UPLOAD_BYTES
   * (refused with 413): nothing of it is kept, and it may be created again. Only with its secret.
   */
  async discardOversized(id: string, secret: string): Promise<void> {
    const row = await this.repo.find(id);
    if (row?.status !== 'pending' || !sameSecret(row.secret_hash, hash(secret))) return;
    const progress = await this.bytes.progress(id);
    if (progress && progress.size === undefined) await this.removeBytes(id);
  }

  private async removeBytes(id: string): Promise<void> {
    // Already gone is fine (a termination, or a second call).
    await this.bytes.remove(id).catch(() => {});
  }

  /** For tests and the CLI: the upload's row. */
  find(id: string): Promise<UploadRow | undefined> {
    return this.repo.find(id);
  }
}
