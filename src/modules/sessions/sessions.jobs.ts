import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { SessionsService } from './sessions.service.ts';

export function sessionJobs({ sessions }: { sessions: SessionsService }): JobHandlersFor<JobKinds, 'account.mail'> {
  return {
    /** Makes the link when the mail is sent, so that no secret waits in the jobs table; a retry makes a new one. */
    'account.mail': (payload) => sessions.mailLink(payload.userId, payload.purpose),
  };
}
