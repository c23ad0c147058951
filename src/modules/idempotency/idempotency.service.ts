import { createHash } from 'node:crypto';
import { AppError } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { type IdempotencyRepository } from './idempotency.repository.ts';

export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * How long a claimed key stays exclusive to its request. A request that dies before storing its answer
 * (a crash, a killed process) leaves the key running; after the lease the same request may run again.
 * A request still running after it simply loses exclusivity: what it stores later is dropped.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 60;

export type StoredResponse = { status: number; body: string; type: string | null };

/** What `begin` decided: run the request under this lease (hand it back to `finish`), or replay. */
export type Begun = { lease: number } | { replay: StoredResponse };

/** Marks the text between the values of an array or object on the work stack of `canonical`. */
class Literal {
  constructor(readonly text: string) {}
}

/**
 * Stable JSON: key order must not make two equal bodies look different. Iterative, so that a body
 * nested as deep as the body limit allows (hundreds of thousands of levels) cannot overflow the stack;
 * the text is the one the recursive definition gives (`auth_token` left out at every level).
 */
function canonical(value: unknown): string {
  let out = '';
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v instanceof Literal) {
      out += v.text;
    } else if (v === null || typeof v !== 'object') {
      out += JSON.stringify(v) ?? 'null';
    } else if (Array.isArray(v)) {
      out += '[';
      stack.push(new Literal(']'));
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push(v[i]);
        if (i > 0) stack.push(new Literal(','));
      }
    } else {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([k, inner]) => k !== 'auth_token' && inner !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out += '{';
      stack.push(new Literal('}'));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, inner] = entries[i];
        stack.push(inner, new Literal(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`));
      }
    }
  }
  return out;
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonical(body)}`)
    .digest('hex');
}

export class IdempotencyService {
  constructor(
    private readonly repo: IdempotencyRepository,
    private readonly leaseSeconds = IDEMPOTENCY_LEASE_SECONDS,
  ) {}

  /** Either claims the key (run the request, then `finish` with the lease) or returns the stored response to replay. */
  async begin(organizationId: number, key: string, fingerprint: string): Promise<Begun> {
    const now = nowSeconds();
    const lease = now + this.leaseSeconds;
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await this.repo.claim(organizationId, key, fingerprint, now, lease)) return { lease };
      const row = await this.repo.find(organizationId, key);
      if (!row) continue;
      if (row.created_at < now - IDEMPOTENCY_WINDOW_SECONDS) {
        await this.repo.removeIfCreatedBefore(organizationId, key, now - IDEMPOTENCY_WINDOW_SECONDS);
        continue;
      }
      if (row.request_hash !== fingerprint) throw new AppError('idempotency_key_reused');
      if (row.state === 'done' && row.response_status !== null) {
        return { replay: { status: row.response_status, body: row.response_body ?? '', type: row.response_type } };
      }
      if (row.locked_until !== null && row.locked_until > now) throw new AppError('idempotency_in_progress');
      // The request that claimed the key is presumed dead: this one runs in its place (or, when another
      // retry took it over first, finds it leased on the next pass).
      if (await this.repo.takeOver(organizationId, key, fingerprint, now, lease)) return { lease };
    }
    throw new AppError('idempotency_in_progress');
  }

  /** Stores the answer of a claimed key, unless its lease ran out and another request took the key over. */
  finish(organizationId: number, key: string, lease: number, response: StoredResponse): Promise<void> {
    // A server failure is not an answer worth replaying: free the key so the client can retry.
    if (response.status >= 500) return this.repo.release(organizationId, key, lease);
    return this.repo.complete(organizationId, key, lease, response.status, response.body, response.type);
  }
}
