import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { GdprService, type GdprWebhookPayload } from '../../modules/gdpr/gdpr.service.ts';
import { safePost, SafeFetchError } from '../../net/safe-fetch.ts';
import { PermanentJobError, type JobHandler } from '../runner.ts';

/**
 * `gdpr.webhook`: POSTs the outcome of a GDPR request to its webhook with the SSRF-safe fetch (same
 * address rules as downloads). Any answer but 2xx is retried with the queue's backoff; a refused
 * address, an invalid URL or 410 fails at once.
 */
export function gdprWebhookHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const service = new GdprService(database.db);
  return async (payload: GdprWebhookPayload, ctx) => {
    const delivery = await service.webhookBody(payload.requestId);
    if (!delivery) return; // The request is gone or not final: nothing to tell.
    let status: number;
    try {
      ({ status } = await safePost(delivery.url, JSON.stringify(delivery.body), {
        allowedHosts: config.uploadAllowedHosts,
        timeoutMs: 30_000,
        maxBytes: 65_536,
        signal: ctx.signal,
        headers: {
          'content-type': 'application/json',
          'x-reelbase-event': `gdpr_request.${delivery.body.status}`,
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
