import { createHmac } from 'node:crypto';
import { sameSecret } from '../../lib/constant-time.ts';

/** The cookie of a visitor who passed a player's email gate (docs/watch.md). */
export const gateCookieName = (uuid: string) => `reelbase_gate_${uuid}`;

/**
 * The gate's cookie value: an HMAC of the player's UUID under the signing secret, so that only this
 * service makes one. It says that an address was given on this browser, nothing more: the address
 * itself goes to the analytics webhooks, not into the cookie.
 */
export function gateCookieValue(secret: string, uuid: string): string {
  return createHmac('sha256', secret).update(`email-gate:${uuid}`).digest('base64url');
}

export function gatePassed(secret: string, uuid: string, cookies: Record<string, string>): boolean {
  const value = cookies[gateCookieName(uuid)];
  return value !== undefined && sameSecret(value, gateCookieValue(secret, uuid));
}
