import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { lockOrganization } from '../../db/dialect.ts';
import { AppError, invalidField } from '../../lib/errors.ts';
import { enqueue, type JobPayload } from '../job-kinds.ts';
import { nowSeconds } from '../../lib/time.ts';
import { distinctAddresses } from '../../mail/addresses.ts';
import { MailDeliveryError, type Mailer, type OutgoingMail } from '../../mail/mailer.ts';
import type { StakeholderEmailsRepository } from './stakeholder-emails.repository.ts';
import type { SendStakeholderEmailBody, StakeholderEmail, ThrottleStatus } from './stakeholder-emails.schemas.ts';

export const WINDOW_SECONDS = 3600;

/** A stakeholder email the mail server refused at first, sent again by the job queue (docs/security.md). */
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
   * Sends one plain-text message to all recipients. The throttle is checked and the email recorded in
   * one transaction holding the organization's lock, so concurrent requests cannot overshoot it; the
   * mail goes out after the commit. When the mail server cannot take it now, the message is handed to
   * the job queue, which tries again (`mail.stakeholder`); it counts against the throttle until it
   * finally fails.
   */
  async send(organizationId: number, userId: number | null, body: SendStakeholderEmailBody): Promise<StakeholderEmail> {
    const player = await this.resolvePlayer(organizationId, body);
    const recipients = distinctAddresses(body.recipients);
    const replyTo = userId === null ? null : await this.repo.userEmail(organizationId, userId);

    const id = await this.db.transaction().execute(async (trx) => {
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
      return row.id;
    });

    const watchLink = player ? `${this.options.publicUrl}/watch/${player.uuid}` : null;
    const text = watchLink ? `${body.body}\n\nWatch "${player!.name}": ${watchLink}\n` : body.body;
    const mail: OutgoingMail = {
      to: recipients,
      subject: body.subject,
      text,
      ...(replyTo ? { replyTo } : {}),
      headers: { 'X-Reelbase-Stakeholder-Email': String(id) },
    };
    const takenAt = nowSeconds();
    try {
      const sent = await this.mailer.send(mail);
      await this.repo.markSent(id, takenAt, sent.messageId);
    } catch (e) {
      if (!(e instanceof MailDeliveryError)) throw e;
      await this.db.transaction().execute(async (trx) => {
        await this.repo.with(trx).noteError(id, e.message);
        await enqueue(trx, 'mail.stakeholder', { emailId: id, mail }, { delayMs: 1000 });
      });
    }
    return { id, recipients, subject: body.subject, player_id: player?.id ?? null, sent_at: takenAt };
  }

  /**
   * One more attempt at a message the mail server refused (the `mail.stakeholder` job). Answers false
   * when there is nothing to send (already sent, or gone); a refusal throws MailDeliveryError, after
   * recording it, and on the last attempt marks the email failed.
   */
  async retry(payload: StakeholderMailPayload, lastAttempt: boolean): Promise<boolean> {
    if ((await this.repo.status(payload.emailId)) !== 'sending') return false;
    try {
      const sent = await this.mailer.send(payload.mail);
      await this.repo.markSent(payload.emailId, nowSeconds(), sent.messageId);
      return true;
    } catch (e) {
      if (e instanceof MailDeliveryError)
        await (lastAttempt ? this.repo.markFailed(payload.emailId, e.message) : this.repo.noteError(payload.emailId, e.message));
      throw e;
    }
  }
}
