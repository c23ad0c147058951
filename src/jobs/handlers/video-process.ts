import path from 'node:path';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createMedia } from '../../media/media.ts';
import { processSource, storeResult } from '../../media/pipeline.ts';
import type { VideoProcessPayload } from '../../modules/videos/video-jobs.ts';
import { VideoMediaService } from '../../modules/videos/video-media.service.ts';
import { safeDownload } from '../../net/safe-fetch.ts';
import { PermanentJobError, type JobHandler } from '../runner.ts';
import { describeMediaFailure } from './media-failure.ts';
import { jobWorkDir } from './work-dir.ts';

/**
 * `video.process`: upload_url → SSRF-safe download → probe → sd and hd MP4 → thumbnails → store →
 * `ready` (or `error` with a clear message). Only the job of the video's current source version
 * publishes; a retried or re-run job starts over in a fresh folder. ffmpeg dies with the job's signal.
 */
export function videoProcessHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const media = createMedia(config);
  const service = new VideoMediaService(database.db, media);
  return async (payload: VideoProcessPayload, ctx) => {
    const video = await service.startProcessing(payload);
    if (!video) return; // deleted, re-sourced, or already finished
    const work = await jobWorkDir(media.workDir, ctx.job);
    let folder: string | null = null;
    try {
      if (!video.upload_url) throw new PermanentJobError('The video has no upload_url');
      const source = path.join(work.dir, 'source');
      await safeDownload(video.upload_url, source, {
        allowedHosts: config.uploadAllowedHosts,
        maxBytes: config.maxUploadBytes,
        timeoutMs: config.uploadTimeoutMs,
        signal: ctx.signal,
      });
      // The source may have changed (or the video gone) during the download: skip the transcodes.
      if (!(await service.stillCurrent(payload))) return;
      const result = await processSource({
        ffmpegPath: config.ffmpegPath,
        ffprobePath: config.ffprobePath,
        source,
        workDir: work.dir,
        audioGainDb: video.audio_gain,
        signal: ctx.signal,
      });
      folder = service.newRunFolder(video, payload.version);
      const keys = await storeResult(media.store, folder, result);
      await service.completeProcessing(payload, folder, result, keys);
    } catch (err) {
      if (folder) await service.removeFolders([folder]);
      if (ctx.signal.aborted) throw err; // stopping or lease lost: the job runs again elsewhere
      const failure = err instanceof PermanentJobError ? { message: err.message, permanent: true } : describeMediaFailure(err, 'upload_url', work.dir);
      if (failure.permanent || ctx.job.attempts >= ctx.job.max_attempts) {
        await service.failProcessing(payload, failure.message);
        throw new PermanentJobError(failure.message);
      }
      throw err;
    } finally {
      await work.dispose();
    }
  };
}
