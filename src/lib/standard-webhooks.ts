import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks (https://www.standardwebhooks.com): a message is signed as
 * base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)) and sent with the headers `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<signature>`). The id stays the same
 * across retries of one message, so that receivers can drop duplicates.
 *
 * A secret written `whsec_<base64>` is that key (as the standard's libraries generate them); any other
 * text is used as its UTF-8 bytes, so that a `security_key` chosen by a client signs as it is.
 */
export function signingKey(secret: string): Buffer {
  if (secret.startsWith('whsec_')) {
    const key = Buffer.from(secret.slice(6), 'base64');
    if (key.length > 0) return key;
  }
  return Buffer.from(secret, 'utf8');
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function signatureHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, id, timestamp, body) };
}

/** A new secret in the standard's form (24 random bytes). */
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}
