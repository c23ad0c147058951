import type { Container } from '../container.ts';
import { collectHandlers, type LanedHandler } from '../jobs/registry.ts';
import { analyticsJobs } from './analytics/analytics.jobs.ts';
import { captionJobs } from './captions/captions.jobs.ts';
import { gdprJobs } from './gdpr/gdpr.jobs.ts';
import { housekeepingJobs } from './housekeeping/housekeeping.jobs.ts';
import { JOB_LANES } from './job-kinds.ts';
import { liveJobs } from './live/live.jobs.ts';
import { sessionJobs } from './sessions/sessions.jobs.ts';
import { stakeholderEmailJobs } from './stakeholder-emails/stakeholder-emails.jobs.ts';
import { thumbnailJobs } from './thumbnails/thumbnails.jobs.ts';
import { uploadJobs } from './uploads/uploads.jobs.ts';
import { videoJobs } from './videos/videos.jobs.ts';
import { WebhookDelivery } from './webhooks/webhook-delivery.ts';
import { webhookJobs } from './webhooks/webhooks.jobs.ts';

/**
 * Every area's job handlers, one per kind of src/modules/job-kinds.ts, each with its kind's lane (what
 * the runner takes). Throws (and so the worker does not start) when a kind has no handler or two.
 */
export function jobHandlers({ config, media, mailer, repositories: r, services: s }: Container): Record<string, LanedHandler<never>> {
  return collectHandlers(JOB_LANES, [
    videoJobs({ config, media, videoMedia: s.videoMedia, uploads: s.uploads }),
    uploadJobs({ uploads: s.uploads }),
    captionJobs({ config, captions: s.captions }),
    thumbnailJobs({ config, media, thumbnails: r.thumbnails, videos: r.videos }),
    liveJobs({ config, media, mailer, videoMedia: s.videoMedia, live: r.live, videos: r.videos }),
    gdprJobs({ gdpr: s.gdpr }),
    webhookJobs({ delivery: new WebhookDelivery(config, s.webhooks), webhooks: r.webhooks, gdpr: s.gdpr }),
    stakeholderEmailJobs({ stakeholderEmails: s.stakeholderEmails }),
    sessionJobs({ sessions: s.sessions }),
    housekeepingJobs({ housekeeping: s.housekeeping }),
    analyticsJobs({ rollups: s.analyticsRollups }),
  ]);
}
