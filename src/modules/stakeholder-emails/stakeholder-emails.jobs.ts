import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { StakeholderEmailsService } from './stakeholder-emails.service.ts';

export function stakeholderEmailJobs({ stakeholderEmails }: { stakeholderEmails: StakeholderEmailsService }): JobHandlersFor<JobKinds, 'mail.stakeholder'> {
  return {
    /**
     * Sends again a stakeholder email the mail server refused when it was requested; a refusal is
     * retried with the queue's backoff, and the last one marks the email failed.
     */
    'mail.stakeholder': async (payload, ctx) => {
      // `attempts` already counts this one (the claim counts it).
      await stakeholderEmails.retry(payload, ctx.job.attempts >= ctx.job.max_attempts);
    },
  };
}
