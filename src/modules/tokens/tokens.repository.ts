import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export class TokensRepository {
  constructor(private readonly db: Kysely<DB>) {}

  findByHash(tokenHash: string) {
    return this.db
      .selectFrom('api_tokens')
      .select(['id', 'organization_id', 'user_id', 'role'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  insert(row: { organization_id: number; role: string; token_hash: string; user_id?: number | null; name?: string | null; created_at: number }) {
    return this.db.insertInto('api_tokens').values(row).returning('id').executeTakeFirstOrThrow();
  }
}
