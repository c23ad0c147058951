import { createHash } from 'node:crypto';
import { AppError } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { type IdempotencyRepository } from './idempotency.repository.ts';

export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

export type StoredResponse = { status: number; body: string; type: string | null };

/** Stable JSON: key order must not make two equal bodies look different. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([k, v]) => k !== 'auth_token' && v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonical(body)}`)
    .digest('hex');
}

export class IdempotencyService {
  constructor(private readonly repo: IdempotencyRepository) {}

  /** Either claims the key (null: go ahead and run) or returns the stored response to replay. */
  async begin(organizationId: number, key: string, fingerprint: string): Promise<StoredResponse | null> {
    const now = nowSeconds();
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await this.repo.claim(organizationId, key, fingerprint, now)) return null;
      const row = await this.repo.find(organizationId, key);
      if (!row) continue;
      if (row.created_at < now - IDEMPOTENCY_WINDOW_SECONDS) {
        await this.repo.removeIfCreatedBefore(organizationId, key, now - IDEMPOTENCY_WINDOW_SECONDS);
        continue;
      }
      if (row.request_hash !== fingerprint) throw new AppError('idempotency_key_reused');
      if (row.state !== 'done' || row.response_status === null) throw new AppError('idempotency_in_progress');
      return { status: row.response_status, body: row.response_body ?? '', type: row.response_type };
    }
    throw new AppError('idempotency_in_progress');
  }

  finish(organizationId: number, key: string, response: StoredResponse): Promise<void> {
    // A server failure is not an answer worth replaying: free the key so the client can retry.
    if (response.status >= 500) return this.repo.release(organizationId, key);
    return this.repo.complete(organizationId, key, response.status, response.body, response.type);
  }
}
