import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { GdprService, type GdprWebhookPayload } from '../../modules/gdpr/gdpr.service.ts';
import type { JobHandler } from '../runner.ts';
import { WebhooksRepository } from '../../modules/webhooks/webhooks.repository.ts';
import { deliverWebhook, organizationSigner } from './webhook-delivery.ts';

/**
 * `gdpr.webhook`: POSTs the outcome of a GDPR request to its webhook, built from the request row when
 * sent, signed with the organization's webhook signing key (docs/webhooks.md).
 */
export function gdprWebhookHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const service = new GdprService(database.db);
  const webhooks = new WebhooksRepository(database.db);
  return async (payload: GdprWebhookPayload, ctx) => {
    const delivery = await service.webhookBody(payload.requestId);
    if (!delivery) return; // The request is gone or not final: nothing to tell.
    await deliverWebhook(config, ctx, delivery.url, delivery.body, `gdpr_request.${delivery.body.status}`, await organizationSigner(webhooks, delivery.organizationId, ctx));
  };
}
