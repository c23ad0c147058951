import path from 'node:path';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { NotAVideoError, probe } from '../../media/ffmpeg.ts';
import { createMedia } from '../../media/media.ts';
import type { VideoFilesPayload } from '../../modules/videos/video-jobs.ts';
import { VideoMediaService } from '../../modules/videos/video-media.service.ts';
import { safeDownload } from '../../net/safe-fetch.ts';
import { PermanentJobError, type JobHandler } from '../runner.ts';
import { describeMediaFailure } from './media-failure.ts';
import { jobWorkDir } from './work-dir.ts';

/** The containers a custom rendition may come in, served as they are. */
function containerOf(formatName: string): { ext: string; contentType: string } | null {
  if (/(^|,)(mov|mp4)(,|$)/.test(formatName)) return { ext: 'mp4', contentType: 'video/mp4' };
  if (/(^|,)webm(,|$)/.test(formatName)) return { ext: 'webm', contentType: 'video/webm' };
  return null;
}

/**
 * `video.files`: fetches the renditions of a custom file set (sd_url, hd_url) with the SSRF-safe
 * fetch, checks that each is an MP4 or WebM video, and publishes them under the set's identifier.
 */
export function videoFilesHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const media = createMedia(config);
  const service = new VideoMediaService(database.db, media);
  return async (payload: VideoFilesPayload, ctx) => {
    const pending = await service.pendingSet(payload);
    if (!pending) return;
    const { set, video } = pending;
    const work = await jobWorkDir(media.workDir, ctx.job);
    const folder = service.newSetFolder(video, set);
    let what = 'file';
    try {
      const files = [];
      for (const [quality, url] of [['sd', set.sd_url], ['hd', set.hd_url]] as const) {
        if (!url) continue;
        what = `${quality}_url`;
        const file = path.join(work.dir, quality);
        await safeDownload(url, file, { allowedHosts: config.uploadAllowedHosts, maxBytes: config.maxUploadBytes, timeoutMs: config.uploadTimeoutMs, signal: ctx.signal });
        const info = await probe(config.ffprobePath, file, { signal: ctx.signal });
        const container = containerOf(info.formatName);
        if (!container) throw new NotAVideoError('it must be an MP4 or WebM file');
        const key = `${folder}/${quality}.${container.ext}`;
        const stored = await media.store.put(key, file);
        files.push({ quality, key, width: info.width, height: info.height, bytes: stored.size, contentType: container.contentType });
      }
      await service.completeSet(payload, folder, files);
    } catch (err) {
      await service.removeFolders([folder]);
      if (ctx.signal.aborted) throw err;
      const failure = describeMediaFailure(err, what, work.dir);
      if (failure.permanent || ctx.job.attempts >= ctx.job.max_attempts) {
        await service.failSet(payload, failure.message);
        throw new PermanentJobError(failure.message);
      }
      throw err;
    } finally {
      await work.dispose();
    }
  };
}
