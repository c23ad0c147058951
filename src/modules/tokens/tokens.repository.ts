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
    return cachedRead(this.db, 'token', tokenHash, (db) =>
      db
        .selectFrom('api_tokens')
        .leftJoin('users', 'users.id', 'api_tokens.user_id')
        .leftJoin('users as creators', 'creators.id', 'api_tokens.created_by')
        .select([
          'api_tokens.id',
          'api_tokens.organization_id',
          'api_tokens.user_id',
          'api_tokens.role',
          'api_tokens.created_by',
          'users.id as live_user_id',
          'users.role as user_role',
          'creators.role as creator_role',
        ])
        .where('api_tokens.token_hash', '=', tokenHash)
        .executeTakeFirst(),
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
    return this.db
      .selectFrom('api_tokens')
      .leftJoin('users', 'users.id', 'api_tokens.user_id')
      .leftJoin('users as creators', 'creators.id', 'api_tokens.created_by')
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
