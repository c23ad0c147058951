import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { generateToken, hashToken } from '../../lib/tokens.ts';
import { nowSeconds } from '../../lib/time.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import { isRole, outranksOrEquals, type Role } from '../roles/permissions.ts';
import type { ApiToken } from './tokens.schemas.ts';
import { type TokensRepository } from './tokens.repository.ts';
import type { AuthContext } from './auth-context.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';

type TokenRow = Awaited<ReturnType<TokensRepository['findByHash']>>;
type ListedRow = Awaited<ReturnType<TokensRepository['list']>>[number];

function toApiToken(row: ListedRow): ApiToken {
  // A user's token acts with the user's current role, and a token made through the API at most with its creator's.
  const own = row.user_id !== null && row.user_role ? row.user_role : row.role;
  const role = row.creator_role && isRole(row.creator_role) && isRole(own) && !outranksOrEquals(row.creator_role, own) ? row.creator_role : own;
  return { id: row.id, name: row.name, role, user_id: row.user_id, user_email: row.email ?? null, created_at: Number(row.created_at) };
}

function authOf(row: TokenRow): AuthContext | null {
  if (!row) return null;
  // A user's token stops working the moment the user is removed, and follows role changes.
  if (row.user_id !== null && row.live_user_id === null) return null;
  // A token made through the API dies with its creator and acts at most with the creator's current role.
  if (row.created_by !== null && row.creator_role === null) return null;
  const own = row.user_id !== null ? row.user_role : row.role;
  if (!isRole(own)) return null;
  const creator = row.creator_role;
  const role: Role = creator !== null && isRole(creator) && !outranksOrEquals(creator, own) ? creator : own;
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

  /** The organization's API tokens, never their secrets. */
  async list(organizationId: number): Promise<ApiToken[]> {
    return (await this.repo.list(organizationId)).map(toApiToken);
  }

  /** A new organization token with `role`, which may not outrank the actor's; its secret is in the answer only. */
  async create(actor: Role, creatorId: number | null, organizationId: number, body: { name: string; role: string }): Promise<ApiToken & { token: string }> {
    if (!isRole(body.role))
      throw new AppError('validation_failed', 'role must be owner, admin, editor or viewer', [
        { field: 'role', message: 'must be owner, admin, editor or viewer' },
      ]);
    const name = body.name.trim();
    if (!name) throw invalidField('name', 'must not be blank');
    if (!outranksOrEquals(actor, body.role)) throw new AppError('forbidden', `The ${actor} role may not create ${body.role} tokens`);
    const token = generateToken();
    const { id } = await this.repo.insert({
      organization_id: organizationId,
      role: body.role,
      token_hash: hashToken(token),
      name,
      user_id: null,
      created_by: creatorId,
      created_at: nowSeconds(),
    });
    const row = await this.repo.find(organizationId, Number(id));
    return { ...toApiToken(row!), token };
  }

  /** Revokes a token at once (the next request with it is a 401); a more powerful one than the actor's role may not be revoked by it. */
  async revoke(actor: Role, organizationId: number, id: number): Promise<ApiToken> {
    const row = await this.repo.find(organizationId, id);
    if (!row) throw notFound('API token', id);
    const token = toApiToken(row);
    if (isRole(token.role) && !outranksOrEquals(actor, token.role)) throw new AppError('forbidden', `The ${actor} role may not revoke ${token.role} tokens`);
    await this.repo.delete(organizationId, id);
    return token;
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
