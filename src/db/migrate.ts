import { Migrator, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0004 from './migrations/0004_accounts.ts';

// Listed explicitly (not read from disk) so that the same list runs under tsx, vitest and a bundle.
const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0004_accounts': m0004,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
