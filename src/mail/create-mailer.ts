import type { Config } from '../config.ts';
import { parseSender, type Mailer } from './mailer.ts';
import { OutboxMailer } from './outbox.ts';
import { SmtpMailer } from './smtp.ts';

/** SMTP when SMTP_URL is set, else the outbox under DATA_DIR (docs/accounts.md). */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'dataDir'>): Mailer {
  const sender = parseSender(config.mailFrom);
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl, sender) : new OutboxMailer(config.dataDir, sender);
}
