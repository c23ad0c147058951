import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../config.ts';
import type { JobHandlersFor } from '../../jobs/registry.ts';
import { PermanentJobError } from '../../jobs/runner.ts';
import { jobWorkDir } from '../../jobs/work-dir.ts';
import { describeMediaFailure } from '../../media/failure.ts';
import { NotAVideoError, probe } from '../../media/ffmpeg.ts';
import type { Media } from '../../media/media.ts';
import { encodeLadder, processSource, storeLadder, storeResult } from '../../media/pipeline.ts';
import { safeDownload } from '../../net/safe-fetch.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { VideoMediaService } from './video-media.service.ts';
import type { UploadedSources } from './video-jobs.ts';

/** The containers a custom rendition may come in, served as they are. */
function containerOf(formatName: string): { ext: string; contentType: string } | null {
  if (/(^|,)(mov|mp4)(,|$)/.test(formatName)) return { ext: 'mp4', contentType: 'video/mp4' };
  if (/(^|,)webm(,|$)/.test(formatName)) return { ext: 'webm', contentType: 'video/webm' };
  return null;
}

/**
 * `signal`, also aborted once `wanted()` answers false (asked every `everyMs`): the work of a file set
 * deleted meanwhile (alone, or with its video) stops instead of holding a media slot until its timeout.
 */
function abortWhenUnwanted(signal: AbortSignal, wanted: () => Promise<boolean>, everyMs = 1000): { signal: AbortSignal; stop(): void } {
  const unwanted = new AbortController();
  const timer = setInterval(() => {
    wanted().then(
      (yes) => {
        if (!yes) unwanted.abort(new Error('The file set was deleted or replaced'));
      },
      () => {}, // the database is unreachable: keep going, the lease decides
    );
  }, everyMs);
  timer.unref();
  return { signal: AbortSignal.any([signal, unwanted.signal]), stop: () => clearInterval(timer) };
}

export interface VideoJobDeps {
  config: Config;
  media: Media;
  videoMedia: VideoMediaService;
  uploads: UploadedSources;
}

/** The media pipeline's jobs (docs/media.md). */
export function videoJobs({
  config,
  media,
  videoMedia: service,
  uploads,
}: VideoJobDeps): JobHandlersFor<JobKinds, 'video.process' | 'video.hls' | 'video.files' | 'media.delete'> {
  return {
    /**
     * Upload_url → SSRF-safe download (or the finished direct upload) → probe → sd and hd MP4 → thumbnails → store →
     * `ready` (or `error` with a clear message). Only the job of the video's current source version
     * publishes; a retried or re-run job starts over in a fresh folder. ffmpeg dies with the job's signal.
     */
    'video.process': async (payload, ctx) => {
      const video = await service.startProcessing(payload);
      if (!video) return; // deleted, re-sourced, or already finished
      const work = await jobWorkDir(media.workDir, ctx.job);
      let folder: string | null = null;
      const what = video.upload_url ? 'upload_url' : 'upload';
      try {
        const source = path.join(work.dir, 'source');
        if (video.upload_url) {
          await safeDownload(video.upload_url, source, {
            allowedHosts: config.uploadAllowedHosts,
            maxBytes: config.maxUploadBytes,
            timeoutMs: config.uploadTimeoutMs,
            idleTimeoutMs: config.uploadIdleTimeoutMs,
            signal: ctx.signal,
          });
        } else if (!(await uploads.fetch(video, source, ctx.signal))) {
          throw new PermanentJobError('The video has no source: no upload_url and no finished upload');
        }
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
        // An uploaded original is kept (the URL of an upload_url stays the way to fetch it again).
        if (!video.upload_url) await uploads.keep(video, source);
        await service.completeProcessing(payload, folder, result, keys);
      } catch (err) {
        if (folder) await service.removeFolders([folder]);
        if (ctx.signal.aborted) throw err; // stopping or lease lost: the job runs again elsewhere
        const failure = err instanceof PermanentJobError ? { message: err.message, permanent: true } : describeMediaFailure(err, what, work.dir);
        if (failure.permanent || ctx.job.attempts >= ctx.job.max_attempts) {
          await service.failProcessing(payload, failure.message);
          if (!video.upload_url) await uploads.discard(video);
          throw new PermanentJobError(failure.message);
        }
        throw err;
      } finally {
        await work.dispose();
      }
    },
    /**
     * The HLS ladder of a video processed before ladders existed: encoded from its uploaded original,
     * else its hd file, into its current run's folder; its sd and hd files stay as they are.
     */
    'video.hls': async (payload, ctx) => {
      const target = await service.ladderSource(payload.videoId);
      if (!target) return; // gone, not ready, or done meanwhile
      const work = await jobWorkDir(media.workDir, ctx.job);
      // A folder of this attempt's own: a second backfill of the same video (queued twice, or retried)
      // never removes the ladder the other one recorded.
      const ladderFolder = `${target.folder}/hls-${randomBytes(4).toString('hex')}`;
      let stored: string | null = null;
      try {
        const source = path.join(work.dir, 'source');
        await pipeline(await media.store.createReadStream(target.source), fs.createWriteStream(source), { signal: ctx.signal });
        const info = await probe(config.ffprobePath, source, { signal: ctx.signal });
        const { command, variants } = await encodeLadder(
          { ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, source, workDir: work.dir, signal: ctx.signal },
          info,
        );
        stored = await storeLadder(media.store, target.folder, command.hlsDir, path.posix.basename(ladderFolder));
        if (!(await service.addLadder(payload.videoId, target.hdKey, stored, variants))) await media.store.delete(ladderFolder);
      } catch (err) {
        if (stored) await media.store.delete(ladderFolder).catch(() => {});
        if (ctx.signal.aborted) throw err;
        const failure = describeMediaFailure(err, 'video', work.dir);
        // The video keeps playing from its MP4 files: a ladder that cannot be made is only logged by the queue.
        if (failure.permanent) throw new PermanentJobError(failure.message);
        throw err;
      } finally {
        await work.dispose();
      }
    },
    /**
     * Fetches the renditions of a custom file set (sd_url, hd_url) with the SSRF-safe
     * fetch, checks that each is an MP4 or WebM video, and publishes them under the set's identifier.
     */
    'video.files': async (payload, ctx) => {
      const pending = await service.pendingSet(payload);
      if (!pending) return;
      const { set, video } = pending;
      const work = await jobWorkDir(media.workDir, ctx.job);
      const folder = service.newSetFolder(video, set);
      // The payload names only the set: deleting the video (which removes its sets) stops this job here.
      const watch = abortWhenUnwanted(ctx.signal, async () => (await service.pendingSet(payload)) !== undefined);
      let what = 'file';
      try {
        const files = [];
        for (const [quality, url] of [
          ['sd', set.sd_url],
          ['hd', set.hd_url],
        ] as const) {
          if (!url) continue;
          what = `${quality}_url`;
          const file = path.join(work.dir, quality);
          await safeDownload(url, file, {
            allowedHosts: config.uploadAllowedHosts,
            maxBytes: config.maxUploadBytes,
            timeoutMs: config.uploadTimeoutMs,
            idleTimeoutMs: config.uploadIdleTimeoutMs,
            signal: watch.signal,
          });
          const info = await probe(config.ffprobePath, file, { signal: watch.signal });
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
        if (watch.signal.aborted) return; // deleted or replaced meanwhile: nothing left to do
        const failure = describeMediaFailure(err, what, work.dir);
        if (failure.permanent || ctx.job.attempts >= ctx.job.max_attempts) {
          await service.failSet(payload, failure.message);
          throw new PermanentJobError(failure.message);
        }
        throw err;
      } finally {
        watch.stop();
        await work.dispose();
      }
    },
    /** Removes store folders whose immediate removal failed (retried until it works). */
    'media.delete': async (payload) => {
      for (const prefix of payload.prefixes) await media.store.delete(prefix);
    },
  };
}
