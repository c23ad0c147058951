import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/dialect.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import { enqueue, type JobPayload } from '../job-kinds.ts';
import { nowSeconds } from '../../lib/time.ts';
import { isRole, type Role } from '../roles/permissions.ts';
import { GDPR_ACTIONS, GdprFailure, type GdprSubject } from './gdpr-actions.ts';
import type { GdprRepository, GdprRequestRow } from './gdpr.repository.ts';
import type { CreateGdprRequestBody, GdprAction, GdprNewValues, GdprRequestStatus } from './gdpr.schemas.ts';

/** The process job carries only ids: the email stays in the request row (not copied into the queue). */
export type GdprProcessPayload = JobPayload<'gdpr.process'>;

/** The outcome POSTed to the request's webhook. */
export interface GdprWebhookBody {
  receipt_id: string;
  request_action: string;
  email: string;
  status: string;
  completed_at: number;
  result?: unknown;
  error?: string;
}

const STAKEHOLDER_PAGE = 500;
const isFinal = (status: string) => status === 'completed' || status === 'failed';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored JSON (request values, results, job payloads), checked field by field where read.
export function parseJson(text: string | null): any {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function parseRecipients(text: string): string[] {
  const list = parseJson(text);
  return Array.isArray(list) ? list.filter((r): r is string => typeof r === 'string') : [];
}

export class GdprService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: GdprRepository,
  ) {}

  /** Records the request and enqueues its processing in one transaction; answers the receipt. */
  async create(organizationId: number, actorRole: Role, body: CreateGdprRequestBody): Promise<{ receipt_id: string }> {
    const action = body.request_action as GdprAction;
    if (action === 'rectify' && body.new_values === undefined) throw invalidField('new_values', 'is required for rectify');
    if (action !== 'rectify' && body.new_values !== undefined) throw invalidField('new_values', 'is only accepted for rectify');
    const webhook = body.webhook ?? null;
    if (webhook !== null) {
      let url: URL | null = null;
      try {
        url = new URL(webhook);
      } catch {
        url = null;
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw invalidField('webhook', 'must be an http or https URL');
    }
    const newValues = body.new_values === undefined ? null : this.normalizeNewValues(body.new_values);
    const receiptId = randomUUID();
    await this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const row = await this.repo.with(trx).insert({
        organization_id: organizationId,
        receipt_id: receiptId,
        request_action: action,
        email: body.email.trim().toLowerCase(),
        webhook,
        new_values: newValues === null ? null : JSON.stringify(newValues),
        status: 'pending',
        result: null,
        created_at: now,
        updated_at: now,
      });
      await enqueue(trx, 'gdpr.process', { requestId: row.id, actorRole });
    });
    return { receipt_id: receiptId };
  }

  private normalizeNewValues(values: GdprNewValues): GdprNewValues {
    const out: GdprNewValues = {};
    if (values.email !== undefined) out.email = values.email.trim().toLowerCase();
    if (values.first_name !== undefined) out.first_name = values.first_name.trim();
    if (values.last_name !== undefined) out.last_name = values.last_name.trim();
    if (values.company !== undefined) out.company = values.company.trim();
    return out;
  }

  async get(organizationId: number, receiptId: string): Promise<GdprRequestStatus> {
    const row = await this.repo.findByReceipt(organizationId, receiptId);
    if (!row) throw notFound('GDPR request');
    return this.toStatus(row);
  }

  toStatus(row: GdprRequestRow): GdprRequestStatus {
    const out: GdprRequestStatus = {
      receipt_id: row.receipt_id,
      request_action: row.request_action,
      email: row.email,
      status: row.status,
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    };
    if (isFinal(row.status)) out.completed_at = Number(row.updated_at);
    const result = parseJson(row.result);
    if (row.status === 'completed') out.result = result;
    if (row.status === 'failed') out.error = typeof result?.error === 'string' ? result.error : 'The request could not be carried out';
    return out;
  }

  /** What the webhook receives, built from the request as it is now (null when not final). */
  async webhookBody(requestId: number): Promise<{ url: string; body: GdprWebhookBody; organizationId: number } | null> {
    const row = await this.repo.find(requestId);
    if (!row || !row.webhook || !isFinal(row.status)) return null;
    const status = this.toStatus(row);
    const body: GdprWebhookBody = {
      receipt_id: status.receipt_id,
      request_action: status.request_action,
      email: status.email,
      status: status.status,
      completed_at: status.completed_at!,
    };
    if (status.result !== undefined) body.result = status.result;
    if (status.error !== undefined) body.error = status.error;
    return { url: row.webhook, body, organizationId: row.organization_id };
  }

  /**
   * Carries the request out: `processing`, then in one transaction every change, the result,
   * `completed` and the webhook job. A GdprFailure (or a unique-email clash) rolls the changes back and
   * records `failed` with its reason. Other errors are thrown for the job system to retry.
   */
  async process(payload: GdprProcessPayload): Promise<void> {
    const row = await this.repo.find(payload.requestId);
    if (!row || isFinal(row.status)) return;
    if (row.status !== 'processing') await this.repo.update(row.id, { status: 'processing', updated_at: nowSeconds() });
    const actor: Role = isRole(payload.actorRole) ? payload.actorRole : 'admin';
    try {
      await this.db.transaction().execute(async (trx) => {
        const repo = this.repo.with(trx);
        const result = await this.carryOut(repo, row, actor);
        await repo.update(row.id, { status: 'completed', result: JSON.stringify(result), updated_at: nowSeconds() });
        if (row.webhook) await enqueue(trx, 'gdpr.webhook', { requestId: row.id });
      });
    } catch (err) {
      if (err instanceof GdprFailure) return this.fail(row.id, err.message);
      if (isUniqueViolation(err)) return this.fail(row.id, 'new_values.email is already used by another user of this organization');
      throw err;
    }
  }

  /** Records `failed` with a reason (and enqueues the webhook), unless the request is already final. */
  async fail(requestId: number, reason: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const row = await repo.find(requestId);
      if (!row || isFinal(row.status)) return;
      await repo.update(row.id, { status: 'failed', result: JSON.stringify({ error: reason }), updated_at: nowSeconds() });
      if (row.webhook) await enqueue(trx, 'gdpr.webhook', { requestId: row.id });
    });
  }

  /** Gathers what the address names, then carries out the request's action on it (gdpr-actions.ts). */
  private async carryOut(repo: GdprRepository, row: GdprRequestRow, actor: Role): Promise<unknown> {
    const action = GDPR_ACTIONS[row.request_action as GdprAction];
    if (!action) throw new GdprFailure(`Unknown request_action ${row.request_action}`);
    const orgId = row.organization_id;
    const email = row.email;
    const user = await repo.findUser(orgId, email);
    const matches = (address: string) => address.trim().toLowerCase() === email;
    const stakeholder = await this.stakeholderEmailsOf(repo, orgId, matches);
    const subject: GdprSubject = {
      repo,
      organizationId: orgId,
      email,
      now: nowSeconds(),
      actor,
      user,
      userRole: user && isRole(user.role) ? user.role : null,
      matches,
      stakeholder,
      live: await repo.liveInstances(orgId, email),
      messages: await this.messagesOf(repo, orgId, email, matches),
    };
    return action(subject, (parseJson(row.new_values) ?? {}) as GdprNewValues);
  }

  /**
   * Queued and past jobs that carry the address, found by the job_subjects index (docs/gdpr.md): the
   * organization's analytics messages naming it (`identified_view`) and stakeholder mails to it. Payloads
   * are read only for the jobs the index names; a job the index does not name is not looked at.
   */
  private async messagesOf(repo: GdprRepository, organizationId: number, email: string, matches: (address: string) => boolean) {
    const identified: GdprSubject['messages']['identified'] = [];
    const mails: GdprSubject['messages']['mails'] = [];
    for (let after = 0; ;) {
      const page = await repo.jobsNaming(organizationId, email, after, STAKEHOLDER_PAGE);
      for (const job of page) {
        const payload = parseJson(job.payload);
        if (!payload || typeof payload !== 'object') continue;
        if (job.type === 'webhook.notify') {
          const body = payload.body;
          if (body?.organization_id === organizationId && typeof body.email === 'string' && matches(body.email)) {
            identified.push({ id: job.id, status: job.status, payload, body });
          }
        } else if (job.type === 'mail.stakeholder' && Array.isArray(payload.mail?.to) && payload.mail.to.some(matches)) {
          mails.push({ id: job.id, payload });
        }
      }
      if (page.length < STAKEHOLDER_PAGE) return { identified, mails };
      after = page[page.length - 1].id;
    }
  }

  private async stakeholderEmailsOf(repo: GdprRepository, organizationId: number, matches: (address: string) => boolean) {
    const found: { row: Awaited<ReturnType<GdprRepository['stakeholderEmailsPage']>>[number]; recipients: string[] }[] = [];
    for (let after = 0; ;) {
      const page = await repo.stakeholderEmailsPage(organizationId, after, STAKEHOLDER_PAGE);
      for (const row of page) {
        const recipients = parseRecipients(row.recipients);
        if (recipients.some(matches)) found.push({ row, recipients });
      }
      if (page.length < STAKEHOLDER_PAGE) return found;
      after = page[page.length - 1].id;
    }
  }
}
