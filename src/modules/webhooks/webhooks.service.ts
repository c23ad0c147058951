import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import { enqueue, enqueueNaming } from '../job-kinds.ts';
import { parseStringList } from '../../lib/json-list.ts';
import { assertOwnOrganization } from '../organizations/own-organization.ts';
import { newSecret } from '../../lib/standard-webhooks.ts';
import { nowSeconds } from '../../lib/time.ts';
import { ANALYTICS_EVENTS, PLAYER_EVENTS, type Delivery, type Webhook, type WebhookBody, type WebhookKind } from './webhooks.schemas.ts';
import { type WebhooksRepository, type WebhookRow } from './webhooks.repository.ts';

/** At most this many webhooks of each kind per organization. */
export const MAX_WEBHOOKS_PER_KIND = 50;

const EVENTS: Record<WebhookKind, readonly string[]> = { analytics: ANALYTICS_EVENTS, players: PLAYER_EVENTS };

/** A delivery's state, from its job's: waiting for its next attempt, being sent, delivered, or given up. */
const DELIVERY_STATUS: Record<string, string> = { queued: 'pending', running: 'sending', done: 'delivered', failed: 'failed' };

function toWebhook(row: WebhookRow): Webhook {
  return { id: row.id, url: row.url, event_subscriptions: parseStringList(row.event_subscriptions), created_at: row.created_at, updated_at: row.updated_at };
}

/**
 * Analytics and player webhooks (docs/webhooks.md): registration, and the messages that changes and
 * viewers cause. Messages are jobs enqueued in the transaction of their cause, delivered signed
 * (Standard Webhooks) and retried for about a day by the job queue.
 */
export class WebhooksService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: WebhooksRepository,
  ) {}

  async register(pathId: number, organizationId: number, kind: WebhookKind, body: WebhookBody) {
    assertOwnOrganization(pathId, organizationId);
    if ((await this.repo.count(organizationId, kind)) >= MAX_WEBHOOKS_PER_KIND) {
      throw invalidField('url', `cannot be added: an organization has at most ${MAX_WEBHOOKS_PER_KIND} ${kind} webhooks`);
    }
    const now = nowSeconds();
    const securityKey = body.security_key ?? newSecret();
    const row = await this.repo.insert({
      organization_id: organizationId,
      kind,
      url: body.url,
      security_key: securityKey,
      event_subscriptions: JSON.stringify(body.event_subscriptions ?? EVENTS[kind]),
      created_at: now,
      updated_at: now,
    });
    return { webhook_id: row.id, status: 'Successfully registered the webhook', security_key: securityKey };
  }

  async remove(pathId: number, organizationId: number, kind: WebhookKind, id: number) {
    assertOwnOrganization(pathId, organizationId);
    const row = await this.repo.delete(organizationId, kind, id);
    if (!row) throw notFound('webhook', id);
    return { status: 'Successfully deleted the webhook' };
  }

  /** The organization's signing key for the webhooks without a key of their own, made on first use. */
  async signingKey(pathId: number, organizationId: number) {
    assertOwnOrganization(pathId, organizationId);
    return { signing_key: (await this.organizationKey(organizationId))! };
  }

  /** A new signing key; messages already signed with the old one stay so (retries are signed anew). */
  async rotateSigningKey(pathId: number, organizationId: number) {
    assertOwnOrganization(pathId, organizationId);
    return { signing_key: (await this.repo.setSigningKey(organizationId, newSecret(), true))! };
  }

  async list(pathId: number, organizationId: number, kind: WebhookKind): Promise<Webhook[]> {
    assertOwnOrganization(pathId, organizationId);
    return (await this.repo.list(organizationId, kind)).map(toWebhook);
  }

  /** Whether any of the organization's webhooks of `kind` subscribed to `event` (so that notify has work to do). */
  async subscribed(organizationId: number, kind: WebhookKind, event: string): Promise<boolean> {
    return (await this.repo.subscriptions(organizationId, kind)).some((list) => parseStringList(list).includes(event));
  }

  /**
   * Enqueues `event` for every webhook of the organization of that kind subscribed to it. `db` is the
   * transaction of the change that causes it, so that a rolled-back change sends nothing. Answers how
   * many messages were enqueued.
   */
  async notify(db: Kysely<DB>, organizationId: number, kind: WebhookKind, event: string, fields: Record<string, unknown>): Promise<number> {
    const repo = this.repo.with(db);
    const hooks = (await repo.list(organizationId, kind)).filter((h) => parseStringList(h.event_subscriptions).includes(event));
    if (hooks.length === 0) return 0;
    const org = await repo.organization(organizationId);
    for (const hook of hooks) await this.enqueueMessage(repo, db, organizationId, org, hook.id, event, fields);
    return hooks.length;
  }

  /** A `webhook.test` message to one webhook, whatever it subscribed to: answers its delivery's id. */
  async sendTest(pathId: number, organizationId: number, kind: WebhookKind, id: number): Promise<{ delivery_id: number }> {
    assertOwnOrganization(pathId, organizationId);
    const hook = await this.repo.findOwn(organizationId, kind, id);
    if (!hook) throw notFound('webhook', id);
    const org = await this.repo.organization(organizationId);
    const deliveryId = await this.enqueueMessage(this.repo, this.db, organizationId, org, hook.id, 'webhook.test', { test: true });
    return { delivery_id: deliveryId };
  }

  /** The webhook's latest deliveries (at most 50), newest first, with their state and attempts. */
  async deliveries(pathId: number, organizationId: number, kind: WebhookKind, id: number): Promise<Delivery[]> {
    assertOwnOrganization(pathId, organizationId);
    if (!(await this.repo.findOwn(organizationId, kind, id))) throw notFound('webhook', id);
    return (await this.repo.deliveries(id, 50)).map((r) => ({
      id: r.job_id,
      event: r.event,
      status: DELIVERY_STATUS[r.status] ?? r.status,
      attempts: r.attempts,
      max_attempts: r.max_attempts,
      last_error: r.last_error,
      created_at: Number(r.created_at),
      next_attempt_at: r.status === 'queued' ? Math.ceil(Number(r.run_at) / 1000) : null,
      updated_at: Math.floor(Number(r.updated_at) / 1000),
    }));
  }

  private async enqueueMessage(
    repo: WebhooksRepository,
    db: Kysely<DB>,
    organizationId: number,
    org: { name: string; account_id: number | null } | undefined,
    webhookId: number,
    event: string,
    fields: Record<string, unknown>,
  ): Promise<number> {
    const messageId = `msg_${randomUUID()}`;
    const now = nowSeconds();
    const body = {
      type: event,
      timestamp: now,
      request_id: messageId,
      organization_id: organizationId,
      organization_name: org?.name ?? null,
      account_id: org?.account_id ?? null,
      ...fields,
    };
    const payload = { webhookId, messageId, event, body };
    // A message that names a person (an identified_view's email) is indexed for GDPR requests (docs/gdpr.md).
    const jobId =
      typeof fields.email === 'string'
        ? await enqueueNaming(db, 'webhook.notify', payload, { organizationId, emails: [fields.email] })
        : await enqueue(db, 'webhook.notify', payload);
    await repo.with(db).addDelivery(jobId, webhookId, event, now);
    return jobId;
  }

  /**
   * The key that signs an organization's webhooks without a key of their own (a video's webhook_url, a
   * GDPR request's webhook), made on first use; null when the organization is gone.
   */
  async organizationKey(organizationId: number): Promise<string | null> {
    return (await this.repo.signingKey(organizationId)) ?? this.repo.setSigningKey(organizationId, newSecret(), false);
  }
}
