import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { isPostgres } from './dialect.ts';
import { installChangeTriggers } from './pg-change-triggers.ts';
import { PgChangeClock } from './change-clock.ts';
import { readCacheOf } from './read-cache.ts';
import { readReach } from './write-reach.ts';
import { retryWhileBusy } from './sqlite-busy.ts';
import { installChangeCounters } from './sqlite-change-counts.ts';
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
import * as m0013 from './migrations/0013_idempotency_lease.ts';
import * as m0014 from './migrations/0014_housekeeping.ts';
import * as m0015 from './migrations/0015_rate_limits.ts';
import * as m0016 from './migrations/0016_hubs.ts';
import * as m0017 from './migrations/0017_uploads.ts';
import * as m0018 from './migrations/0018_upload_locks.ts';
import * as m0019 from './migrations/0019_caption_files.ts';
import * as m0020 from './migrations/0020_event_list_indexes.ts';
import * as m0021 from './migrations/0021_event_counts.ts';
import * as m0022 from './migrations/0022_event_search.ts';
import * as m0023 from './migrations/0023_live_list.ts';
import * as m0024 from './migrations/0024_players_videos_at_size.ts';
import * as m0025 from './migrations/0025_stored_objects.ts';
import * as m0026 from './migrations/0026_analytics.ts';
import * as m0027 from './migrations/0027_analytics_rollups.ts';
import * as m0028 from './migrations/0028_users_tags_at_size.ts';
import * as m0029 from './migrations/0029_sign_in.ts';
import * as m0030 from './migrations/0030_webhook_deliveries.ts';
import * as m0031 from './migrations/0031_token_creators.ts';
import * as m0032 from './migrations/0032_videos_by_status.ts';
import * as m0033 from './migrations/0033_event_pages.ts';
import * as m0034 from './migrations/0034_row_pages.ts';
import * as m0035 from './migrations/0035_counter_shards.ts';
import * as m0036 from './migrations/0036_player_day_sketches.ts';
import * as m0037 from './migrations/0037_identified_by_player.ts';
import * as m0038 from './migrations/0038_cta_days.ts';
import * as m0039 from './migrations/0039_breakdown_days.ts';
import * as m0040 from './migrations/0040_player_hours.ts';
import * as m0041 from './migrations/0041_retention_days.ts';

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
  '0013_idempotency_lease': m0013,
  '0014_housekeeping': m0014,
  '0015_rate_limits': m0015,
  '0016_hubs': m0016,
  '0017_uploads': m0017,
  '0018_upload_locks': m0018,
  '0019_caption_files': m0019,
  '0020_event_list_indexes': m0020,
  '0021_event_counts': m0021,
  '0022_event_search': m0022,
  '0023_live_list': m0023,
  '0024_players_videos_at_size': m0024,
  '0025_stored_objects': m0025,
  '0026_analytics': m0026,
  '0027_analytics_rollups': m0027,
  '0028_users_tags_at_size': m0028,
  '0029_sign_in': m0029,
  '0030_webhook_deliveries': m0030,
  '0031_token_creators': m0031,
  '0032_videos_by_status': m0032,
  '0033_event_pages': m0033,
  '0034_row_pages': m0034,
  '0035_counter_shards': m0035,
  '0036_player_day_sketches': m0036,
  '0037_identified_by_player': m0037,
  '0038_cta_days': m0038,
  '0039_breakdown_days': m0039,
  '0040_player_hours': m0040,
  '0041_retention_days': m0041,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  let result: MigrationResultSet;
  if (!isPostgres(db)) {
    // The change counters in the same transaction: no committed schema is without them (src/db/sqlite-change-counts.ts).
    result = await db.connection().execute((conn) =>
      withSqliteWriteLock(conn, async () => {
        const migrated = await migrate(conn, { disableTransactions: true });
        await installChangeCounters(conn);
        return migrated;
      }),
    );
  } else {
    // PostgreSQL: Kysely holds a session advisory lock while it migrates, and creates its own tables
    // tolerating a concurrent creator; the triggers take a lock of their own.
    result = await retryingCatalogRaces(() => migrate(db, {}));
    const organizationTables = await installChangeTriggers(db);
    const clock = readCacheOf(db)?.clock;
    if (clock instanceof PgChangeClock) clock.organizationTables = organizationTables;
  }
  // From now on our own writes drop only the cached reads of the tables they reach (src/db/write-reach.ts).
  await readCacheOf(db)?.clock.learnReach(() => readReach(db));
  return result;
}

/**
 * Kysely's check for its migration tables reads the whole catalog (every schema of the database); a
 * table created or dropped meanwhile in another schema (another deployment, a test file, another node
 * migrating) can make that read fail with "column … does not exist" or "relation … does not exist".
 * Nothing was changed then: the migration is simply run again.
 */
async function retryingCatalogRaces<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      if (attempt >= 5 || (code !== '42703' && code !== '42P01')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function migrate(db: Kysely<any>, options: { disableTransactions?: boolean }): Promise<MigrationResultSet> {
  // Areas add migrations independently; an older-numbered one arriving later must still apply.
  // Kysely looks for its migration tables in every PostgreSQL schema unless told which one; name the
  // current one so that databases sharing a server (tests: one schema per file) do not see each other's.
  const migrationTableSchema = isPostgres(db) ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true, ...options, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error('migration failed', { cause: result.error });
  return result;
}

/** Longest a process waits for another one's migrations on the same SQLite file. */
const SQLITE_LOCK_WAIT_MS = 10 * 60 * 1000;

/**
 * SQLite: Kysely takes no lock (it assumes one connection) and runs the migrations outside any
 * transaction, so two processes opening one new file would both read "nothing applied" and the second
 * would die creating a table the first created. Everything, Kysely's own tables included, runs in one
 * `BEGIN IMMEDIATE` transaction instead: it takes the write lock before anything is read, the other
 * processes wait for it and then find nothing left to do, and a failing migration leaves the file as it
 * was. (So a migration cannot switch `pragma foreign_keys`, which SQLite ignores inside a transaction.)
 * The lock is waited for asynchronously (src/db/sqlite-busy.ts), as long as another process's
 * migrations may take, rather than inside SQLite, which would block the event loop.
 */
async function withSqliteWriteLock<T>(conn: Kysely<any>, run: () => Promise<T>): Promise<T> {
  await retryWhileBusy(() => sql`begin immediate`.execute(conn), SQLITE_LOCK_WAIT_MS);
  try {
    const result = await run();
    await sql`commit`.execute(conn);
    return result;
  } catch (error) {
    // Some errors end the transaction themselves: the rollback may find none, and the error is what matters.
    await sql`rollback`.execute(conn).catch(() => undefined);
    throw error;
  }
}
