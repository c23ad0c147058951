import { PostgresAdapter, PostgresDialect, sql, type DialectAdapter, type Kysely } from 'kysely';

/**
 * Kysely's PostgreSQL migrator locks one advisory key for the whole server, so every schema's
 * migrations wait for every other's: deployments (or test files) sharing a server queue behind each
 * other. The lock here is keyed by the current schema, which is all the migrations touch.
 */
class SchemaLockedAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_lock(hashtextextended('reelbase migrations ' || current_schema(), 0))`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_unlock(hashtextextended('reelbase migrations ' || current_schema(), 0))`.execute(db);
  }
}

export class SchemaPostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new SchemaLockedAdapter();
  }
}
