import path from 'node:path';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { liveDir } from '../../live/paths.ts';
import { buildRecording } from '../../live/recording.ts';
import { nowSeconds } from '../../lib/time.ts';
import { createMedia } from '../../media/media.ts';
import { processSource, storeResult } from '../../media/pipeline.ts';
import { LiveRepository } from '../../modules/live/live.repository.ts';
import { VideoMediaService } from '../../modules/videos/video-media.service.ts';
import { VideosRepository } from '../../modules/videos/videos.repository.ts';
import { PermanentJobError, type JobHandler } from '../runner.ts';
import { describeMediaFailure } from './media-failure.ts';
import { jobWorkDir } from './work-dir.ts';

export interface LiveRecordPayload {
  instance_id: number;
}

/**
 * `live.record`: a broadcast ended (status processing). Its HLS segments are joined into one MP4
 * (remux), which goes through the media pipeline like an upload (probe → sd and hd renditions →
 * thumbnails → store) and becomes the instance's video; then the instance is `ready` with
 * `vod_created_at`. When the recording cannot be made the video ends in `error` (with its
 * error_message) and the instance is `ready` with vod_created_at 0.
 */
export function liveRecordHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const media = createMedia(config);
  const service = new VideoMediaService(database.db, media);
  const live = new LiveRepository(database.db);
  const videos = new VideosRepository(database.db);

  const finish = async (instanceId: number, recorded: boolean) => {
    await live.markReady(instanceId, nowSeconds(), recorded);
  };

  return async (payload: LiveRecordPayload, ctx) => {
    const instance = await live.findById(payload.instance_id);
    if (!instance || instance.status !== 'processing') return; // deleted, or already done
    const [video] = instance.video_id === null ? [] : await videos.findMany([instance.video_id]);
    const version = { videoId: video?.id ?? 0, version: video?.media_version ?? 0 };
    // The video was deleted or given another source meanwhile: the broadcast is over all the same.
    if (!video || !(await service.startProcessing(version))) return finish(instance.id, false);
    const work = await jobWorkDir(media.workDir, ctx.job);
    let folder: string | null = null;
    try {
      const source = path.join(work.dir, 'recording.mp4');
      const segments = await buildRecording(config.ffmpegPath, liveDir(config.dataDir, instance.player_uuid), source, ctx.signal);
      if (segments === 0) throw new PermanentJobError('The broadcast recorded no media');
      const result = await processSource({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, source, workDir: work.dir, audioGainDb: video.audio_gain, signal: ctx.signal });
      folder = service.newRunFolder(video, version.version);
      const keys = await storeResult(media.store, folder, result);
      const published = await service.completeProcessing(version, folder, result, keys);
      await finish(instance.id, published);
    } catch (err) {
      if (folder) await service.removeFolders([folder]);
      if (ctx.signal.aborted) throw err; // stopping or lease lost: the job runs again elsewhere
      const failure = err instanceof PermanentJobError ? { message: err.message, permanent: true } : describeMediaFailure(err, 'recording', work.dir);
      if (failure.permanent || ctx.job.attempts >= ctx.job.max_attempts) {
        await service.failProcessing(version, failure.message);
        await finish(instance.id, false);
        throw new PermanentJobError(failure.message);
      }
      throw err;
    } finally {
      await work.dispose();
    }
  };
}
