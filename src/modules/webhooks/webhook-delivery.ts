import type { Config } from '../../config.ts';
import type { JobContext } from '../../jobs/registry.ts';
import { PermanentJobError } from '../../jobs/runner.ts';
import { signatureHeaders } from '../../lib/standard-webhooks.ts';
import { nowSeconds } from '../../lib/time.ts';
import { safePost, SafeFetchError } from '../../net/safe-fetch.ts';
import type { WebhooksService } from './webhooks.service.ts';

export type Signer = (body: string) => Record<string, string>;

/** Standard Webhooks headers for one message: the same id on every attempt, the attempt's time. */
export function signedWith(key: string, messageId: string): Signer {
  return (body) => signatureHeaders(key, messageId, nowSeconds(), body);
}

/** How every webhook leaves Reelbase: SSRF-safe, signed, and failing in a way the job queue retries. */
export class WebhookDelivery {
  constructor(
    private readonly config: Config,
    private readonly webhooks: WebhooksService,
  ) {}

  /**
   * For a webhook without a key of its own (a video's, a GDPR request's): signed with the organization's
   * key, the job's id as the message id; unsigned when the organization is unknown or gone.
   */
  async organizationSigner(organizationId: number | undefined, ctx: JobContext): Promise<Signer | undefined> {
    const key = organizationId === undefined ? null : await this.webhooks.organizationKey(organizationId);
    return key ? signedWith(key, `msg_job_${ctx.job.id}`) : undefined;
  }

  /**
   * POSTs one JSON webhook with the SSRF-safe fetch (same address rules as downloads). Any answer but
   * 2xx throws, so the queue retries with its backoff; a refused address, an invalid URL or 410 Gone
   * fails the job at once. `sign` gives headers that sign the exact body sent (Standard Webhooks).
   */
  async deliver(ctx: JobContext, url: string, body: unknown, event: string, sign?: Signer): Promise<void> {
    let status: number;
    const text = JSON.stringify(body);
    try {
      ({ status } = await safePost(url, text, {
        allowedHosts: this.config.uploadAllowedHosts,
        timeoutMs: 30_000,
        maxBytes: 65_536,
        signal: ctx.signal,
        headers: { 'content-type': 'application/json', 'x-reelbase-event': event, 'x-reelbase-delivery': String(ctx.job.id), ...sign?.(text) },
      }));
    } catch (err) {
      if (err instanceof SafeFetchError && err.permanent) throw new PermanentJobError(err.message);
      throw err;
    }
    if (status === 410) throw new PermanentJobError('The webhook answered HTTP 410 Gone');
    if (status < 200 || status >= 300) throw new Error(`The webhook answered HTTP ${status}`);
  }
}
