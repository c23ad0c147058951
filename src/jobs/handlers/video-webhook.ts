import type { Config } from '../../config.ts';
import type { VideoWebhookPayload } from '../../modules/videos/video-jobs.ts';
import { safePost, SafeFetchError } from '../../net/safe-fetch.ts';
import { PermanentJobError, type JobHandler } from '../runner.ts';

/**
 * `video.webhook`: POSTs the Video resource (as it was when it became ready or error) to the
 * video's webhook_url, with the same address rules as downloads. Any answer but 2xx is retried with
 * the queue's backoff (about a day); a refused address or an invalid URL fails at once.
 */
export function videoWebhookHandler({ config }: { config: Config }): JobHandler {
  return async (payload: VideoWebhookPayload, ctx) => {
    let status: number;
    try {
      ({ status } = await safePost(payload.url, JSON.stringify(payload.video), {
        allowedHosts: config.uploadAllowedHosts,
        timeoutMs: 30_000,
        maxBytes: 65_536,
        signal: ctx.signal,
        headers: {
          'content-type': 'application/json',
          'x-reelbase-event': `video.${payload.video.status ?? 'updated'}`,
          'x-reelbase-delivery': String(ctx.job.id),
        },
      }));
    } catch (err) {
      if (err instanceof SafeFetchError && err.permanent) throw new PermanentJobError(err.message);
      throw err;
    }
    if (status === 410) throw new PermanentJobError('The webhook answered HTTP 410 Gone');
    if (status < 200 || status >= 300) throw new Error(`The webhook answered HTTP ${status}`);
  };
}
