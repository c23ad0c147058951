import type { Config } from '../../config.ts';
import type { VideoWebhookPayload } from '../../modules/videos/video-jobs.ts';
import type { JobHandler } from '../runner.ts';
import { deliverWebhook } from './webhook-delivery.ts';

/**
 * `video.webhook`: POSTs the Video resource (as it was when it became ready or error) to the
 * video's webhook_url; retried with the queue's backoff (about a day).
 */
export function videoWebhookHandler({ config }: { config: Config }): JobHandler {
  return (payload: VideoWebhookPayload, ctx) =>
    deliverWebhook(config, ctx, payload.url, payload.video, `video.${payload.video.status ?? 'updated'}`);
}
