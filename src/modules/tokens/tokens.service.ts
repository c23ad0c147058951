import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { generateToken, hashToken } from '../../lib/tokens.ts';
import { nowSeconds } from '../../lib/time.ts';
import { isRole, type Role } from '../roles/permissions.ts';
import { type TokensRepository } from './tokens.repository.ts';
import type { AuthContext } from './auth-context.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';

type TokenRow = Awaited<ReturnType<TokensRepository['findByHash']>>;

function authOf(row: TokenRow): AuthContext | null {
  if (!row) return null;
  // A user's token stops working the moment the user is removed, and follows role changes.
  if (row.user_id !== null && row.live_user_id === null) return null;
  const role = row.user_id !== null ? row.user_role : row.role;
  if (!isRole(role)) return null;
  return { tokenId: row.id, organizationId: row.organization_id, userId: row.user_id, role };
}

export class TokensService {
  constructor(private readonly repo: TokensRepository) {}

  /**
   * Resolves a presented token to who it acts for, or null when it is unknown. Runs on every request:
   * a cached token is answered at once, without a promise.
   */
  authenticate(token: string): MaybePromise<AuthContext | null> {
    return this.authenticateHash(hashToken(token));
  }

  /** As authenticate, for a token already hashed with hashToken. */
  authenticateHash(tokenHash: string): MaybePromise<AuthContext | null> {
    return mapMaybe(this.repo.findByHash(tokenHash), authOf);
  }

  /** Issues a token; the clear text is returned once and never stored. */
  async issue(organizationId: number, role: Role, name?: string, userId: number | null = null, trx?: Kysely<DB>): Promise<string> {
    const token = generateToken();
    await (trx ? this.repo.with(trx) : this.repo).insert({
      organization_id: organizationId,
      role,
      token_hash: hashToken(token),
      name: name ?? null,
      user_id: userId,
      created_at: nowSeconds(),
    });
    return token;
  }
}
