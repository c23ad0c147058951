import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { JobHandler } from './runner.ts';
import { mediaDeleteHandler } from './handlers/media-delete.ts';
import { videoFilesHandler } from './handlers/video-files.ts';
import { videoProcessHandler } from './handlers/video-process.ts';
import { videoWebhookHandler } from './handlers/video-webhook.ts';
import { MEDIA_DELETE_JOB, VIDEO_FILES_JOB, VIDEO_PROCESS_JOB, VIDEO_WEBHOOK_JOB } from '../modules/videos/video-jobs.ts';
import { captionFetchHandler } from './handlers/caption-fetch.ts';
import { CAPTION_FETCH_JOB } from '../modules/captions/captions.service.ts';
import { thumbnailFetchHandler } from '../modules/thumbnails/thumbnail-fetch.job.ts';
import { THUMBNAIL_FETCH_JOB } from '../modules/thumbnails/thumbnails.service.ts';
import { liveCleanupHandler } from './handlers/live-cleanup.ts';
import { liveNotifyHandler } from './handlers/live-notify.ts';
import { liveRecordHandler } from './handlers/live-record.ts';
import { LIVE_CLEANUP_JOB, LIVE_NOTIFY_JOB, LIVE_RECORD_JOB } from '../modules/live/live.service.ts';
import { gdprProcessHandler } from './handlers/gdpr-process.ts';
import { gdprWebhookHandler } from './handlers/gdpr-webhook.ts';
import { GDPR_PROCESS_JOB, GDPR_WEBHOOK_JOB } from '../modules/gdpr/gdpr.service.ts';
import { webhookNotifyHandler } from './handlers/webhook-notify.ts';
import { stakeholderMailHandler } from './handlers/stakeholder-mail.ts';
import { STAKEHOLDER_MAIL_JOB } from '../modules/stakeholder-emails/stakeholder-emails.service.ts';
import { WEBHOOK_NOTIFY_JOB } from '../modules/webhooks/webhooks.service.ts';

/**
 * The job types this build runs, one handler per type. Areas add theirs here (transcoding, webhook
 * delivery, GDPR requests, live recordings) as they arrive.
 */
export function jobHandlers(deps: { config: Config; database: Database }): Record<string, JobHandler> {
  return {
    [VIDEO_PROCESS_JOB]: videoProcessHandler(deps),
    [VIDEO_FILES_JOB]: videoFilesHandler(deps),
    [VIDEO_WEBHOOK_JOB]: videoWebhookHandler(deps),
    [MEDIA_DELETE_JOB]: mediaDeleteHandler(deps),
    [CAPTION_FETCH_JOB]: captionFetchHandler(deps),
    [THUMBNAIL_FETCH_JOB]: thumbnailFetchHandler(deps),
    [LIVE_RECORD_JOB]: liveRecordHandler(deps),
    [LIVE_NOTIFY_JOB]: liveNotifyHandler(deps),
    [LIVE_CLEANUP_JOB]: liveCleanupHandler(deps),
    [GDPR_PROCESS_JOB]: gdprProcessHandler(deps),
    [GDPR_WEBHOOK_JOB]: gdprWebhookHandler(deps),
    [WEBHOOK_NOTIFY_JOB]: webhookNotifyHandler(deps),
    [STAKEHOLDER_MAIL_JOB]: stakeholderMailHandler(deps),
  };
}
