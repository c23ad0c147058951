import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.ts';
import type { JobHandlersFor } from '../../jobs/registry.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { Media } from '../../media/media.ts';
import { safeDownload, SafeFetchError } from '../../net/safe-fetch.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';
import { sniffImage } from './images.ts';
import type { ThumbnailsRepository } from './thumbnails.repository.ts';

/** Largest custom thumbnail image copied. */
export const MAX_THUMBNAIL_BYTES = 10 * 1024 * 1024;

export interface ThumbnailJobDeps {
  config: Config;
  media: Media;
  thumbnails: ThumbnailsRepository;
  videos: VideosRepository;
}

export function thumbnailJobs({ config, media, thumbnails, videos }: ThumbnailJobDeps): JobHandlersFor<JobKinds, 'thumbnail.fetch'> {
  return {
    /**
     * Copies a custom thumbnail's image (thumbnail_url) into the media store with the
     * SSRF-safe fetch, so that it is served by signed URL like the generated ones. Network failures and
     * 5xx answers are retried; when the image cannot be had (refused address, 404, too large, not a
     * JPEG/PNG/GIF/WebP, or the last attempt failed) it is no longer selected: the video's latest
     * stored thumbnail is, so a poster is never an address nobody checked. A thumbnail deleted or already stored meanwhile is left alone.
     */
    'thumbnail.fetch': async (payload, ctx) => {
      const row = await thumbnails.findById(payload.thumbnail_id);
      if (!row || row.kind !== 'custom' || row.path !== null || row.url !== payload.url) return;
      const video = await videos.find(row.organization_id, row.video_id);
      if (!video) return;
      await fs.mkdir(media.workDir, { recursive: true });
      const dir = await fs.mkdtemp(path.join(media.workDir, 'thumbnail-'));
      try {
        const file = path.join(dir, 'image');
        try {
          await safeDownload(payload.url, file, {
            allowedHosts: config.uploadAllowedHosts,
            maxBytes: MAX_THUMBNAIL_BYTES,
            timeoutMs: 60_000,
            idleTimeoutMs: config.uploadIdleTimeoutMs,
            signal: ctx.signal,
            headers: { accept: 'image/jpeg, image/png, image/webp, image/gif;q=0.8' },
          });
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          const permanent = err instanceof SafeFetchError && err.permanent;
          if (!permanent && ctx.job.attempts < ctx.job.max_attempts) throw err;
          // Never to be had: it stops being the selected thumbnail (a poster is only ever a stored image).
          await thumbnails.refuseCustom(row.id, payload.url, nowSeconds());
          return;
        }
        const handle = await fs.open(file, 'r');
        const head = Buffer.alloc(32);
        try {
          await handle.read(head, 0, 32, 0);
        } finally {
          await handle.close();
        }
        const kind = sniffImage(head);
        if (!kind) {
          await thumbnails.refuseCustom(row.id, payload.url, nowSeconds());
          return;
        }
        const key = `videos/${video.uuid}/thumbnails/${row.uuid}.${kind.ext}`;
        await media.store.put(key, file);
        const stored = await thumbnails.setStored(row.id, payload.url, key, { width: kind.width, height: kind.height }, nowSeconds());
        // Deleted or changed while downloading: the copy belongs to nothing.
        if (!stored) await media.store.delete(key);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
