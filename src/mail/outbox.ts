import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { formatSender, MailDeliveryError, type DeliveredMail, type Mailer, type OutgoingMail, type Sender } from './mailer.ts';

/** What an outbox file holds: one JSON object per message. */
export interface OutboxMessage {
  message_id: string;
  date: string;
  from: string;
  to: string[];
  reply_to: string | null;
  subject: string;
  text: string;
  headers: Record<string, string>;
}

/**
 * Development and test transport: each message becomes `DATA_DIR/outbox/<epoch ms>-<uuid>.json`,
 * written to a temporary name and renamed, so that a reader never sees half a file.
 */
export class OutboxMailer implements Mailer {
  readonly transport = 'outbox' as const;
  readonly dir: string;

  constructor(
    dataDir: string,
    private readonly sender: Sender,
  ) {
    this.dir = path.join(dataDir, 'outbox');
  }

  async send(mail: OutgoingMail): Promise<DeliveredMail> {
    const id = randomUUID();
    const domain = this.sender.address.split('@')[1] ?? 'localhost';
    const message: OutboxMessage = {
      message_id: `<${id}@${domain}>`,
      date: new Date().toISOString(),
      from: formatSender(mail.fromName ? { name: mail.fromName, address: this.sender.address } : this.sender),
      to: mail.to,
      reply_to: mail.replyTo ?? null,
      subject: mail.subject,
      text: mail.text,
      headers: mail.headers ?? {},
    };
    const file = path.join(this.dir, `${Date.now()}-${id}.json`);
    try {
      await fs.mkdir(this.dir, { recursive: true });
      const tmp = path.join(this.dir, `.${id}.tmp`);
      await fs.writeFile(tmp, JSON.stringify(message, null, 2), { mode: 0o600 });
      await fs.rename(tmp, file);
    } catch (e) {
      throw new MailDeliveryError(`could not write to the outbox: ${(e as Error).message}`);
    }
    return { messageId: message.message_id, transport: 'outbox', rejected: [], path: file };
  }

  async close(): Promise<void> {}
}

/** Every message in an outbox directory, oldest first (tests and tools read it). */
export async function readOutbox(dataDir: string): Promise<Array<OutboxMessage & { file: string }>> {
  const dir = path.join(dataDir, 'outbox');
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const files = names.filter((n) => n.endsWith('.json')).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || a.localeCompare(b));
  return Promise.all(files.map(async (f) => ({ ...(JSON.parse(await fs.readFile(path.join(dir, f), 'utf8')) as OutboxMessage), file: f })));
}
