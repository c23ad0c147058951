import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { WebhooksRepository } from '../../modules/webhooks/webhooks.repository.ts';
import type { WebhookNotifyPayload } from '../../modules/webhooks/webhooks.service.ts';
import type { JobHandler } from '../runner.ts';
import { deliverWebhook, signedWith } from './webhook-delivery.ts';

/**
 * `webhook.notify`: POSTs one analytics or player message to its webhook, signed with the webhook's
 * security_key (Standard Webhooks: the same `webhook-id` on every attempt, a fresh timestamp) and
 * with the key echoed in the body. A webhook deleted meanwhile gets nothing.
 */
export function webhookNotifyHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const repo = new WebhooksRepository(database.db);
  return async (payload: WebhookNotifyPayload, ctx) => {
    const hook = await repo.find(payload.webhookId);
    if (!hook) return;
    const body = { ...payload.body, security_key: hook.security_key };
    await deliverWebhook(config, ctx, hook.url, body, payload.event, signedWith(hook.security_key, payload.messageId));
  };
}
