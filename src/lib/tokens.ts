import { hash, randomBytes, randomUUID } from 'node:crypto';

/** A new API token: 32 random bytes, URL-safe. Only its hash is ever stored. */
export function generateToken(): string {
  return `rb_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

export const newUuid = (): string => randomUUID();
