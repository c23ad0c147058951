import type { Kysely } from 'kysely';

/**
 * Who made an API token through the API (docs/security.md, "API tokens"): the token acts at most
 * with its creator's current role and goes with its creator.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_tokens')
    .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_tokens').dropColumn('created_by').execute();
}
