import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../config.ts';
import type { JobHandlersFor } from '../../jobs/registry.ts';
import { safeDownload, SafeFetchError } from '../../net/safe-fetch.ts';
import type { JobKinds } from '../job-kinds.ts';
import { failedCaption, MAX_CAPTION_BYTES, processCaption, type CaptionsService } from './captions.service.ts';
import { decodeSubtitleBytes } from './subtitles.ts';

export function captionJobs({ config, captions: service }: { config: Config; captions: CaptionsService }): JobHandlersFor<JobKinds, 'caption.fetch'> {
  return {
    /**
     * downloads a caption's srt_url / vtt_url with the SSRF-safe fetch and stores it as
     * WebVTT (status complete), or records why it could not (status error, naming the line of a
     * malformed file). Network failures and 5xx answers are retried with the queue's backoff; on the last
     * attempt, and at once for permanent failures (refused address, 404, too large), the caption fails.
     * A job for an older source (the caption got a new file meanwhile) or a deleted caption does nothing.
     */
    'caption.fetch': async (payload, ctx) => {
      const row = await service.pendingFetch(payload);
      if (!row) return;
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'reelbase-caption-'));
      try {
        let columns;
        try {
          const file = path.join(dir, 'source');
          await safeDownload(row.source_url!, file, {
            allowedHosts: config.uploadAllowedHosts,
            maxBytes: MAX_CAPTION_BYTES,
            timeoutMs: 60_000,
            idleTimeoutMs: config.uploadIdleTimeoutMs,
            signal: ctx.signal,
            headers: { accept: 'text/vtt, application/x-subrip, text/plain;q=0.9, */*;q=0.5' },
          });
          // The file's own signature decides the format; srt_url / vtt_url only chose the URL.
          columns = processCaption(decodeSubtitleBytes(await fs.readFile(file)));
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          const lastAttempt = ctx.job.attempts >= ctx.job.max_attempts;
          const permanent = err instanceof SafeFetchError && err.permanent;
          if (!permanent && !lastAttempt) throw err;
          const reason = err instanceof Error ? err.message : String(err);
          columns = failedCaption(`The caption file could not be fetched from ${row.source_url}: ${reason}`);
        }
        await service.finishFetch(payload, columns);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
