import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { lockOrganization } from '../../db/dialect.ts';
import { AppError, invalidField } from '../../lib/errors.ts';
import type { JobsRepository } from '../../jobs/jobs.repository.ts';
import { enqueueNaming, type JobPayload } from '../job-kinds.ts';
import { nowSeconds } from '../../lib/time.ts';
import { distinctAddresses } from '../../mail/addresses.ts';
import { MailDeliveryError, type DeliveredMail, type Mailer, type OutgoingMail } from '../../mail/mailer.ts';
import type { StakeholderEmailsRepository } from './stakeholder-emails.repository.ts';
import type { SendStakeholderEmailBody, StakeholderEmail, ThrottleStatus } from './stakeholder-emails.schemas.ts';

export const WINDOW_SECONDS = 3600;
/**
 * How long a stakeholder email's job waits for the request that recorded it to send the mail itself; the
 * request keeps pushing it back while its attempt lasts. After a crash a worker sends the mail this late.
 */
export const INLINE_SEND_GRACE_MS = 60_000;
/** A worker tries again this soon after the request's own attempt failed. */
const RETRY_DELAY_MS = 1000;

/** A stakeholder email's job (the outbox): sends it when the request could not (docs/security.md). */
export type StakeholderMailPayload = JobPayload<'mail.stakeholder'>;

/** 429: the organization's hourly allowance is used up; nothing was sent. */
export class RateLimitedError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    limit: number,
  ) {
    super('rate_limited', `At most ${limit} stakeholder emails per hour; try again in ${retryAfterSeconds} s`);
  }
}

export interface StakeholderEmailsOptions {
  /** Emails per organization per sliding window. */
  limit: number;
  /** Base URL of the watch pages (config.publicUrl). */
  publicUrl: string;
  windowSeconds?: number;
}

/**
 * Where the throttle stands, from the creation times of the counted emails (oldest first): `resets_at`
 * is when `remaining` next grows, i.e. when the email whose expiry frees a slot leaves the window.
 */
export function throttleOf(times: number[], limit: number, window: number, now: number): ThrottleStatus {
  const remaining = Math.max(0, limit - times.length);
  // With n counted and limit l, a slot frees when the (n - l + 1)-th oldest expires (the oldest when n < l).
  const pivot = times[Math.max(0, times.length - limit)];
  return { limit, remaining, window_seconds: window, resets_at: pivot === undefined ? now : pivot + window };
}

/** Mail to a video's stakeholders, at most `limit` per organization per hour. */
export class StakeholderEmailsService {
  private readonly window: number;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly mailer: Mailer,
    private readonly options: StakeholderEmailsOptions,
    private readonly repo: StakeholderEmailsRepository,
    private readonly jobs: JobsRepository,
  ) {
    this.window = options.windowSeconds ?? WINDOW_SECONDS;
  }

  async throttleStatus(organizationId: number): Promise<ThrottleStatus> {
    const now = nowSeconds();
    const times = await this.repo.countedSince(organizationId, now - this.window);
    return throttleOf(times, this.options.limit, this.window, now);
  }

  private async resolvePlayer(organizationId: number, body: SendStakeholderEmailBody) {
    if (body.player_id === undefined && body.player_uuid === undefined) return null;
    const byId = body.player_id === undefined ? undefined : await this.repo.findPlayerById(organizationId, body.player_id);
    if (body.player_id !== undefined && !byId) throw invalidField('player_id', 'does not name a player of this organization');
    if (body.player_uuid === undefined) return byId!;
    const byUuid = await this.repo.findPlayerByUuid(organizationId, body.player_uuid);
    if (!byUuid) throw invalidField('player_uuid', 'does not name a player of this organization');
    if (byId && byId.id !== byUuid.id) throw invalidField('player_uuid', 'names another player than player_id');
    return byUuid;
  }

  /**
   * Sends one plain-text message to all recipients. The throttle is checked, the email recorded and its
   * `mail.stakeholder` job queued in one transaction holding the organization's lock (the outbox): an
   * email that counts against the throttle always has the job that sends it, whatever happens after the
   * commit, and concurrent requests cannot overshoot the limit. The request then tries to send it itself
   * (sendNow); when that fails the job sends it (retried with backoff); it counts until it finally fails.
   */
  async send(organizationId: number, userId: number | null, body: SendStakeholderEmailBody): Promise<StakeholderEmail> {
    const player = await this.resolvePlayer(organizationId, body);
    const recipients = distinctAddresses(body.recipients);
    const replyTo = userId === null ? null : await this.repo.userEmail(organizationId, userId);
    const watchLink = player ? `${this.options.publicUrl}/watch/${player.uuid}` : null;
    const text = watchLink ? `${body.body}\n\nWatch "${player!.name}": ${watchLink}\n` : body.body;

    const { id, jobId, mail } = await this.db.transaction().execute(async (trx) => {
      await lockOrganization(trx, organizationId);
      const repo = this.repo.with(trx);
      const now = nowSeconds();
      const times = await repo.countedSince(organizationId, now - this.window);
      const status = throttleOf(times, this.options.limit, this.window, now);
      if (status.remaining === 0) {
        throw new RateLimitedError(Math.max(1, (this.options.limit === 0 ? now + this.window : status.resets_at) - now), this.options.limit);
      }
      const row = await repo.insert({
        organization_id: organizationId,
        recipients: JSON.stringify(recipients),
        subject: body.subject,
        body: body.body,
        player_id: player?.id ?? null,
        status: 'sending',
        created_at: now,
      });
      const mail: OutgoingMail = {
        to: recipients,
        subject: body.subject,
        text,
        ...(replyTo ? { replyTo } : {}),
        headers: { 'X-Reelbase-Stakeholder-Email': String(row.id) },
      };
      // Not due while this request may still be sending it (sendNow keeps it so): a worker takes it only
      // when that attempt failed, or when the process died before or during it.
      const jobId = await enqueueNaming(
        trx,
        'mail.stakeholder',
        { emailId: row.id, mail },
        { organizationId, emails: recipients },
        { delayMs: INLINE_SEND_GRACE_MS },
      );
      return { id: row.id, jobId, mail };
    });

    const takenAt = nowSeconds();
    await this.sendNow(id, jobId, mail, takenAt);
    return { id, recipients, subject: body.subject, player_id: player?.id ?? null, sent_at: takenAt };
  }

  /**
   * The request's own attempt at a committed email. While it lasts, the job's start keeps being pushed
   * back (so that no worker sends the mail at the same time); sent, the email is marked so and its job
   * deleted, in one transaction; failed (a refusal or anything else), the error is noted and the job made
   * due soon. Either way the answer is the same: the email is taken.
   */
  private async sendNow(id: number, jobId: number, mail: OutgoingMail, takenAt: number): Promise<void> {
    const keepAway = setInterval(() => {
      this.jobs.postponeQueued(jobId, Date.now() + INLINE_SEND_GRACE_MS, Date.now()).catch(() => false);
    }, INLINE_SEND_GRACE_MS / 3);
    let sent: DeliveredMail;
    try {
      sent = await this.mailer.send(mail);
    } catch (e) {
      const error = e instanceof MailDeliveryError ? e.message : `could not send: ${e instanceof Error ? e.message : String(e)}`;
      await this.db.transaction().execute(async (trx) => {
        await this.repo.with(trx).noteError(id, error);
        await this.jobs.with(trx).postponeQueued(jobId, Date.now() + RETRY_DELAY_MS, Date.now(), error);
      });
      return;
    } finally {
      clearInterval(keepAway);
    }
    await this.db.transaction().execute(async (trx) => {
      await this.repo.with(trx).markSent(id, takenAt, sent.messageId);
      await this.jobs.with(trx).deleteQueued(jobId);
    });
  }

  /**
   * The `mail.stakeholder` job: sends an email the request could not send itself. Answers false when
   * there is nothing to send (already sent, or gone); a failure is recorded and thrown (the queue tries
   * again), and on the last attempt marks the email failed.
   */
  async deliver(payload: StakeholderMailPayload, lastAttempt: boolean): Promise<boolean> {
    if ((await this.repo.status(payload.emailId)) !== 'sending') return false;
    let sent: DeliveredMail;
    try {
      sent = await this.mailer.send(payload.mail);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      await (lastAttempt ? this.repo.markFailed(payload.emailId, error) : this.repo.noteError(payload.emailId, error));
      throw e;
    }
    await this.repo.markSent(payload.emailId, nowSeconds(), sent.messageId);
    return true;
  }
}
