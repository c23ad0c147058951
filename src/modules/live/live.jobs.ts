import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.ts';
import type { JobHandlersFor } from '../../jobs/registry.ts';
import { PermanentJobError } from '../../jobs/runner.ts';
import { jobWorkDir } from '../../jobs/work-dir.ts';
import { nowSeconds } from '../../lib/time.ts';
import { legacyLiveDir, liveKey, localLiveDir } from '../../live/paths.ts';
import { buildRecording } from '../../live/recording.ts';
import { MailDeliveryError, type Mailer } from '../../mail/mailer.ts';
import { describeMediaFailure } from '../../media/failure.ts';
import type { Media } from '../../media/media.ts';
import { processSource, storeResult } from '../../media/pipeline.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { VideoMediaService } from '../videos/video-media.service.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';
import type { LiveRepository } from './live.repository.ts';

export interface LiveJobDeps {
  config: Config;
  media: Media;
  mailer: Mailer;
  videoMedia: VideoMediaService;
  live: LiveRepository;
  videos: VideosRepository;
}

export function liveJobs({
  config,
  media,
  mailer,
  videoMedia: service,
  live,
  videos,
}: LiveJobDeps): JobHandlersFor<JobKinds, 'live.record' | 'live.notify' | 'live.cleanup'> {
  const finish = async (instanceId: number, recorded: boolean) => {
    await live.markReady(instanceId, nowSeconds(), recorded);
  };

  return {
    /**
     * A broadcast ended (status processing). Its HLS segments are joined into one MP4
     * (remux), which goes through the media pipeline like an upload (probe → sd and hd renditions →
     * thumbnails → store) and becomes the instance's video; then the instance is `ready` with
     * `vod_created_at`. When the recording cannot be made the video ends in `error` (with its
     * error_message) and the instance is `ready` with vod_created_at 0.
     */
    'live.record': async (payload, ctx) => {
      const instance = await live.findById(payload.instance_id);
      if (!instance || instance.status !== 'processing') return; // deleted, or already done
      const [video] = instance.video_id === null ? [] : await videos.findMany(instance.organization_id, [instance.video_id]);
      const version = { videoId: video?.id ?? 0, version: video?.media_version ?? 0 };
      // The video was deleted or given another source meanwhile: the broadcast is over all the same.
      if (!video || !(await service.startProcessing(version))) return finish(instance.id, false);
      const work = await jobWorkDir(media.workDir, ctx.job);
      let folder: string | null = null;
      try {
        const source = path.join(work.dir, 'recording.mp4');
        const segments = await buildRecording({
          ffmpegPath: config.ffmpegPath,
          store: media.store,
          playerUuid: instance.player_uuid,
          workDir: work.dir,
          output: source,
          signal: ctx.signal,
        });
        if (segments === 0) throw new PermanentJobError('The broadcast recorded no media');
        const result = await processSource({
          ffmpegPath: config.ffmpegPath,
          ffprobePath: config.ffprobePath,
          source,
          workDir: work.dir,
          audioGainDb: video.audio_gain,
          signal: ctx.signal,
        });
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
        // The broadcast is over: a packager folder a dead ingest left on this machine is of no use.
        await fsp.rm(localLiveDir(media.workDir, instance.player_uuid), { recursive: true, force: true }).catch(() => {});
      }
    },
    /**
     * A stream went live. Its organization's admins and owners (and the user who
     * created it) get an email through the mailer (SMTP, or the outbox under DATA_DIR), unless the
     * stream has disable_notifications. Retried with the queue's backoff when the transport fails.
     */
    'live.notify': async (payload) => {
      const instance = await live.findById(payload.instance_id);
      if (!instance || instance.disable_notifications) return;
      const recipients = [...new Set([...(await live.adminEmails(instance.organization_id)), ...(instance.email ? [instance.email] : [])])];
      if (recipients.length === 0) return;
      const watch = `${config.publicUrl}/watch/${instance.player_uuid}`;
      const started = instance.start_time ? new Date(instance.start_time * 1000).toISOString() : new Date().toISOString();
      try {
        await mailer.send({
          to: recipients,
          subject: `Live now: ${instance.name}`,
          text: [
            `The live stream "${instance.name}" went live at ${started}.`,
            '',
            `Watch: ${watch}`,
            '',
            `Stream instance ${instance.id}. To stop these emails for a stream, create it with disable_notifications.`,
          ].join('\n'),
          headers: { 'X-Reelbase-Live-Instance': String(instance.id) },
        });
      } catch (err) {
        if (err instanceof MailDeliveryError) throw err; // retried
        throw new PermanentJobError((err as Error).message);
      }
    },
    /**
     * Removes a deleted instance's HLS output: `live/<player uuid>` in the file store, and what is left
     * on this machine (a packager folder, the DATA_DIR/live/<player uuid> of earlier versions).
     */
    'live.cleanup': async (payload) => {
      if (!/^[0-9a-f-]{1,64}$/i.test(payload.player_uuid)) return;
      // Only output no instance owns any more.
      if (await live.findByPlayerUuid(payload.player_uuid)) return;
      await media.store.delete(liveKey(payload.player_uuid));
      await fsp.rm(localLiveDir(media.workDir, payload.player_uuid), { recursive: true, force: true });
      await fsp.rm(legacyLiveDir(config.dataDir, payload.player_uuid), { recursive: true, force: true });
    },
  };
}
