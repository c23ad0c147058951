/** A plain-text message to send. The sender is the configured MAIL_FROM address. */
export interface OutgoingMail {
  to: string[];
  subject: string;
  text: string;
  replyTo?: string;
  /** Shown as the sender's name in front of the MAIL_FROM address (e.g. an access manager's custom name). */
  fromName?: string;
  /** Extra headers (X-…), e.g. to tie a mail to the record that caused it. */
  headers?: Record<string, string>;
}

export interface DeliveredMail {
  /** The Message-ID header, `<…>`. */
  messageId: string;
  transport: 'smtp' | 'outbox';
  /** Recipients the SMTP server refused (the others got the mail). */
  rejected: string[];
  /** Outbox only: the file written. */
  path?: string;
}

/**
 * Where outgoing mail goes: SMTP when SMTP_URL is set, else files in DATA_DIR/outbox. Stakeholder
 * emails use it; live-stream notifications are meant to, too.
 */
export interface Mailer {
  readonly transport: 'smtp' | 'outbox';
  /** Resolves once the SMTP server accepted the message (or the outbox file exists); else MailDeliveryError. */
  send(mail: OutgoingMail): Promise<DeliveredMail>;
  close(): Promise<void>;
}

/** The transport refused or could not take the message; nothing was sent. The message never holds credentials. */
export class MailDeliveryError extends Error {}

export interface Sender {
  name: string | null;
  address: string;
}

/** MAIL_FROM as `address` or `Name <address>` (the name may be quoted). */
export function parseSender(from: string): Sender {
  const text = from.trim();
  const angled = /^(?:"([^"\r\n]*)"|([^<>"\r\n]*?))\s*<([^<>\s@]+@[^<>\s@]+)>$/.exec(text);
  if (angled) return { name: (angled[1] ?? angled[2] ?? '').trim() || null, address: angled[3] };
  if (/^[^<>\s@"]+@[^<>\s@"]+$/.test(text)) return { name: null, address: text };
  throw new Error(`MAIL_FROM must be "address" or "Name <address>"`);
}

/** The header form of a sender, the name quoted when it needs to be. */
export function formatSender(sender: Sender): string {
  if (!sender.name) return sender.address;
  const name = /^[\w .!#$%&'*+\-/=?^`{|}~]*$/.test(sender.name) ? sender.name : `"${sender.name.replace(/["\\]/g, '\\$&')}"`;
  return `${name} <${sender.address}>`;
}
