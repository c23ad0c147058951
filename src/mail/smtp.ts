import type nodemailerModule from 'nodemailer';
import { whenUsed } from '../lib/when-used.ts';
import { MailDeliveryError, type DeliveredMail, type Mailer, type OutgoingMail, type Sender } from './mailer.ts';

const nodemailer = whenUsed<typeof nodemailerModule>('nodemailer');

/**
 * SMTP through nodemailer. Options in the URL's query (e.g. `?requireTLS=true`) override the timeouts
 * below, which keep a request from hanging on an unreachable server.
 */
export class SmtpMailer implements Mailer {
  readonly transport = 'smtp' as const;
  private readonly transporter;

  constructor(
    url: string,
    private readonly sender: Sender,
  ) {
    this.transporter = nodemailer().createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  }

  async send(mail: OutgoingMail): Promise<DeliveredMail> {
    try {
      const info = await this.transporter.sendMail({
        from: { name: mail.fromName ?? this.sender.name ?? '', address: this.sender.address },
        to: mail.to,
        replyTo: mail.replyTo,
        subject: mail.subject,
        text: mail.text,
        headers: mail.headers,
      });
      return { messageId: info.messageId, transport: 'smtp', rejected: [...(info.rejected ?? [])] };
    } catch (e) {
      const err = e as { code?: string; responseCode?: number; message?: string };
      const what = [err.code, err.responseCode].filter(Boolean).join(' ');
      throw new MailDeliveryError(`SMTP delivery failed${what ? ` (${what})` : ''}: ${err.message ?? 'unknown error'}`);
    }
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}
