import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { isPostgres } from './dialect.ts';
import { installChangeTriggers } from './pg-change-triggers.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0004 from './migrations/0004_accounts.ts';
import * as m0005 from './migrations/0005_accounts_more.ts';
import * as m0006 from './migrations/0006_security_mail.ts';
import * as m0007 from './migrations/0007_jobs.ts';
import * as m0010 from './migrations/0010_live.ts';
import * as m0009 from './migrations/0009_captions.ts';
import * as m0008 from './migrations/0008_media.ts';
import * as m0011 from './migrations/0011_watch.ts';
import * as m0012 from './migrations/0012_webhooks.ts';

// Listed explicitly (not read from disk) so that the same list runs under tsx, vitest and a bundle.
const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0004_accounts': m0004,
  '0005_accounts_more': m0005,
  '0006_security_mail': m0006,
  '0007_jobs': m0007,
  '0010_live': m0010,
  '0009_captions': m0009,
  '0008_media': m0008,
  '0011_watch': m0011,
  '0012_webhooks': m0012,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  // Areas add migrations independently; an older-numbered one arriving later must still apply.
  // Kysely looks for its migration tables in every PostgreSQL schema unless told which one; name the
  // current one so that databases sharing a server (tests: one schema per file) do not see each other's.
  const migrationTableSchema = isPostgres(db) ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error('migration failed', { cause: result.error });
  if (isPostgres(db)) await installChangeTriggers(db);
  return result;
}
