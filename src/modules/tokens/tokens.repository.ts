import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { cachedRead } from '../../db/read-cache.ts';

export class TokensRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new TokensRepository(db);
  }

  /** The token with the role it acts with: its user's current role when it belongs to a user. */
  findByHash(tokenHash: string) {
    return cachedRead(
      this.db,
      'token',
      tokenHash,
      (db) =>
        withPeople(db)
          .select([
            'api_tokens.id',
            'api_tokens.organization_id',
            'api_tokens.user_id',
            'api_tokens.role',
            'api_tokens.created_by',
            'users.id as live_user_id',
            'users.role as user_role',
            'users.organization_id as user_organization_id',
            'creators.role as creator_role',
            'creators.organization_id as creator_organization_id',
          ])
          .where('api_tokens.token_hash', '=', tokenHash)
          .executeTakeFirst(),
      ownersOfToken,
    );
  }

  insert(row: {
    organization_id: number;
    role: string;
    token_hash: string;
    user_id?: number | null;
    created_by?: number | null;
    name?: string | null;
    created_at: number;
  }) {
    return this.db.insertInto('api_tokens').values(row).returning('id').executeTakeFirstOrThrow();
  }

  /** An organization's tokens as listed (never their hashes): a user's email and role, and the creator's role. */
  private listed(organizationId: number) {
    return withPeople(this.db)
      .select([
        'api_tokens.id',
        'api_tokens.name',
        'api_tokens.role',
        'api_tokens.user_id',
        'api_tokens.created_at',
        'users.email',
        'users.role as user_role',
        'creators.role as creator_role',
      ])
      .where('api_tokens.organization_id', '=', organizationId);
  }

  list(organizationId: number) {
    return this.listed(organizationId).orderBy('api_tokens.id').execute();
  }

  find(organizationId: number, id: number) {
    return this.listed(organizationId).where('api_tokens.id', '=', id).executeTakeFirst();
  }

  async delete(organizationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('api_tokens').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  async deleteForUser(userId: number): Promise<void> {
    await this.db.deleteFrom('api_tokens').where('user_id', '=', userId).execute();
  }
}

/** Tokens with their user (`users`) and their creator (`creators`), either of which may be gone. */
function withPeople(db: Kysely<DB>) {
  return db.selectFrom('api_tokens').leftJoin('users', 'users.id', 'api_tokens.user_id').leftJoin('users as creators', 'creators.id', 'api_tokens.created_by');
}

/**
 * Whose rows a token's lookup read: the token's organization, its user's and its creator's (the same
 * one today; told from the rows, not assumed), each row found by a unique key, so that other
 * organizations' writes leave it cached. A user or creator gone (a null join) is no one's row: one
 * made again under that id, by any organization, must be seen, so the lookup is then everyone's.
 */
function ownersOfToken(row: {
  organization_id: number;
  user_id: number | null;
  created_by: number | null;
  user_organization_id: number | null;
  creator_organization_id: number | null;
}): number[] | null {
  const owners = [row.organization_id];
  for (const [id, organization] of [
    [row.user_id, row.user_organization_id],
    [row.created_by, row.creator_organization_id],
  ] as const) {
    if (id === null) continue;
    if (organization === null) return null;
    owners.push(organization);
  }
  return owners;
}
