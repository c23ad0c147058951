import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createMailer, MailDeliveryError } from '../../mail/mailer.ts';
import { LiveRepository } from '../../modules/live/live.repository.ts';
import { PermanentJobError, type JobHandler } from '../runner.ts';

export interface LiveNotifyPayload {
  instance_id: number;
}

/**
 * `live.notify`: a stream went live. Its organization's admins and owners (and the user who
 * created it) get an email through the mailer (SMTP, or the outbox under DATA_DIR), unless the
 * stream has disable_notifications. Retried with the queue's backoff when the transport fails.
 */
export function liveNotifyHandler({ config, database }: { config: Config; database: Database }): JobHandler {
  const live = new LiveRepository(database.db);
  return async (payload: LiveNotifyPayload) => {
    const instance = await live.findById(payload.instance_id);
    if (!instance || instance.disable_notifications) return;
    const recipients = [...new Set([...(await live.adminEmails(instance.organization_id)), ...(instance.email ? [instance.email] : [])])];
    if (recipients.length === 0) return;
    const watch = `${config.publicUrl}/watch/${instance.player_uuid}`;
    const hls = `${config.publicUrl}/live/${instance.player_uuid}/index.m3u8`;
    const started = instance.start_time ? new Date(instance.start_time * 1000).toISOString() : new Date().toISOString();
    const mailer = createMailer(config);
    try {
      await mailer.send({
        to: recipients,
        subject: `Live now: ${instance.name}`,
        text: [
          `The live stream "${instance.name}" went live at ${started}.`,
          '',
          `Watch: ${watch}`,
          `HLS: ${hls}`,
          '',
          `Stream instance ${instance.id}. To stop these emails for a stream, create it with disable_notifications.`,
        ].join('\n'),
        headers: { 'X-Reelbase-Live-Instance': String(instance.id) },
      });
    } catch (err) {
      if (err instanceof MailDeliveryError) throw err; // retried
      throw new PermanentJobError((err as Error).message);
    } finally {
      await mailer.close();
    }
  };
}
