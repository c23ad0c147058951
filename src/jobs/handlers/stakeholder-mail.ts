import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createMailer } from '../../mail/mailer.ts';
import { StakeholderEmailsService, type StakeholderMailPayload } from '../../modules/stakeholder-emails/stakeholder-emails.service.ts';
import type { JobHandler } from '../runner.ts';

/**
 * `mail.stakeholder`: sends again a stakeholder email the mail server refused when it was requested;
 * a refusal is retried with the queue's backoff, and the last one marks the email failed.
 */
export function stakeholderMailHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const service = new StakeholderEmailsService(database.db, createMailer(config), { limit: config.stakeholderEmailsPerHour, publicUrl: config.publicUrl });
  return async (payload: StakeholderMailPayload, ctx) => {
    // `attempts` already counts this one (the claim counts it).
    await service.retry(payload, ctx.job.attempts >= ctx.job.max_attempts);
  };
}
