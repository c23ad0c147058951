import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { VideoWebhookPayload } from '../../modules/videos/video-jobs.ts';
import { WebhooksRepository } from '../../modules/webhooks/webhooks.repository.ts';
import type { JobHandler } from '../runner.ts';
import { deliverWebhook, organizationSigner } from './webhook-delivery.ts';

/**
 * `video.webhook`: POSTs the Video resource (as it was when it became ready or error) to the
 * video's webhook_url, signed with the organization's webhook signing key (docs/webhooks.md);
 * retried with the queue's backoff (about a day).
 */
export function videoWebhookHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const repo = new WebhooksRepository(database.db);
  return async (payload: VideoWebhookPayload, ctx) => {
    const organizationId = payload.organizationId ?? (await repo.videoOrganization(payload.videoId));
    await deliverWebhook(config, ctx, payload.url, payload.video, `video.${payload.video.status ?? 'updated'}`, await organizationSigner(repo, organizationId, ctx));
  };
}
