import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';
import { openDatabase, type Database, type DatabaseOptions } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import type { OrganizationsService } from './modules/organizations/organizations.service.ts';
import v8 from 'node:v8';
import v8Flags from './v8-flags.json' with { type: 'json' };

/** Opens the configured database (PostgreSQL when DATABASE_URL is set, else SQLite under DATA_DIR). */
export function openConfiguredDatabase(config: Config, options: Pick<DatabaseOptions, 'backgroundCheckpoints' | 'strictChanges'> = {}): Database {
  return openDatabase({ url: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'reelbase.sqlite'), ...options });
}

/** The media URL secret: SIGNING_SECRET, else one made once and kept in DATA_DIR/signing-secret. */
export function ensureSigningSecret(config: Config): void {
  if (config.signingSecret) return;
  const file = path.join(config.dataDir, 'signing-secret');
  if (!fs.existsSync(file)) {
    try {
      fs.writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  config.signingSecret = fs.readFileSync(file, 'utf8').trim();
}

export async function openAndMigrate(config: Config, options: Pick<DatabaseOptions, 'backgroundCheckpoints' | 'strictChanges'> = {}): Promise<Database> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  ensureSigningSecret(config);
  const database = openConfiguredDatabase(config, options);
  await migrateToLatest(database.db);
  return database;
}

/** First start on an empty database: organization "Default" and its owner token in DATA_DIR/owner-token. */
export async function bootstrapOwner(config: Config, organizations: OrganizationsService): Promise<string | null> {
  const created = await organizations.bootstrapIfEmpty();
  if (!created) return null;
  const file = path.join(config.dataDir, 'owner-token');
  fs.writeFileSync(file, `${created.token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return created.token;
}

/**
 * V8 settings for a long-running server, applied before it serves. Under sustained load V8 can decide
 * that a hot allocation site's objects live long and allocate them straight in old space
 * ("pretenuring"); request-scoped objects die young anyway, so old space then fills within a second
 * and every scavenge has to walk it. One process in three started that way served about 35% fewer
 * requests with a p99 of 7 ms instead of 2 ms, for as long as it ran (docs/performance.md).
 * The flags are in src/v8-flags.json, which scripts/start.mjs also sets before it compiles the
 * bundle: V8 refuses a code cache made under other flags.
 */
export function tuneRuntime(): void {
  for (const flag of v8Flags) v8.setFlagsFromString(flag);
}
