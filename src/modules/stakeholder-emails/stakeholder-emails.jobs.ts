import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { StakeholderEmailsService } from './stakeholder-emails.service.ts';

export function stakeholderEmailJobs({ stakeholderEmails }: { stakeholderEmails: StakeholderEmailsService }): JobHandlersFor<JobKinds, 'mail.stakeholder'> {
  return {
    /**
     * Sends a stakeholder email its request could not send (a refusal, an error, a crash before or
     * during the attempt); a failure is retried with the queue's backoff, and the last one marks the
     * email failed. An email already sent is left alone.
     */
    'mail.stakeholder': async (payload, ctx) => {
      // `attempts` already counts this one (the claim counts it).
      await stakeholderEmails.deliver(payload, ctx.job.attempts >= ctx.job.max_attempts);
    },
  };
}
