import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { GdprService } from '../gdpr/gdpr.service.ts';
import type { JobKinds } from '../job-kinds.ts';
import { signedWith, type WebhookDelivery } from './webhook-delivery.ts';
import type { WebhooksRepository } from './webhooks.repository.ts';

export interface WebhookJobDeps {
  delivery: WebhookDelivery;
  webhooks: WebhooksRepository;
  gdpr: GdprService;
}

/** Every webhook delivery: analytics and player messages, a video's webhook_url, a GDPR request's webhook. */
export function webhookJobs({ delivery, webhooks, gdpr }: WebhookJobDeps): JobHandlersFor<JobKinds, 'webhook.notify' | 'video.webhook' | 'gdpr.webhook'> {
  return {
    /**
     * One analytics or player message to its webhook, signed with the webhook's security_key (Standard
     * Webhooks: the same `webhook-id` on every attempt, a fresh timestamp) and with the key echoed in
     * the body. A webhook deleted meanwhile gets nothing.
     */
    'webhook.notify': async (payload, ctx) => {
      const hook = await webhooks.find(payload.webhookId);
      if (!hook) return;
      const body = { ...payload.body, security_key: hook.security_key };
      await delivery.deliver(ctx, hook.url, body, payload.event, signedWith(hook.security_key, payload.messageId));
    },
    /**
     * The Video resource (as it was when it became ready or error) to the video's webhook_url, signed
     * with the organization's webhook signing key; retried with the queue's backoff (about a day).
     */
    'video.webhook': async (payload, ctx) => {
      const organizationId = payload.organizationId ?? (await webhooks.videoOrganization(payload.videoId));
      await delivery.deliver(
        ctx,
        payload.url,
        payload.video,
        `video.${payload.video.status ?? 'updated'}`,
        await delivery.organizationSigner(organizationId, ctx),
      );
    },
    /** The outcome of a GDPR request, built from the request row when sent (docs/gdpr.md). */
    'gdpr.webhook': async (payload, ctx) => {
      const sent = await gdpr.webhookBody(payload.requestId);
      if (!sent) return; // The request is gone or not final: nothing to tell.
      await delivery.deliver(ctx, sent.url, sent.body, `gdpr_request.${sent.body.status}`, await delivery.organizationSigner(sent.organizationId, ctx));
    },
  };
}
