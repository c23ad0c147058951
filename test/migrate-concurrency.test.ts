/**
 * Processes starting together on an empty database (the API, a worker, the CLI) all run the migrator:
 * each must come up, the migrations having run exactly once. Two Database objects stand for the two
 * processes: two PostgreSQL pools on one fresh schema, two SQLite connections to one fresh file.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database, type DialectName } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { uncoveredTables } from '../src/db/pg-change-triggers.ts';
import { dialects, TEST_SCHEMA_PREFIX } from './helpers/harness.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-migrate-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `count` connections to one new, empty store, as `count` processes would open it. */
async function freshStore(dialect: DialectName, count: number): Promise<Database[]> {
  if (dialect === 'sqlite') {
    const file = path.join(dir, `${randomBytes(6).toString('hex')}.db`);
    return Array.from({ length: count }, () => openDatabase({ sqlitePath: file }));
  }
  const url = process.env.TEST_DATABASE_URL!;
  // Named like the harness's schemas, so that the global teardown drops it.
  const schema = `${TEST_SCHEMA_PREFIX}${process.env.REELBASE_TEST_RUN ?? 'norun'}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return Array.from({ length: count }, () => openDatabase({ url, pgSchema: schema, poolSize: 2 }));
}

describe.each(dialects)('migrateToLatest from several processes at once on %s', (dialect) => {
  it('brings every process up, each migration applied once', async () => {
    for (let round = 0; round < 3; round++) {
      const stores = await freshStore(dialect, round === 0 ? 2 : 3);
      try {
        const results = await Promise.allSettled(stores.map((s) => migrateToLatest(s.db)));
        expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(stores.map(() => 'ok'));
        const applied = results.flatMap((r) => (r.status === 'fulfilled' ? (r.value.results ?? []) : [])).map((m) => m.migrationName);
        // Every migration ran in exactly one of the processes.
        expect(applied.length).toBe(new Set(applied).size);
        const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(stores[0].db);
        expect(rows.map((r) => r.name).sort()).toEqual([...applied].sort());
        // A later start finds nothing to do, and the schema is whole (PostgreSQL: every table notifies).
        expect((await migrateToLatest(stores[1].db)).results).toEqual([]);
        await stores[1].db.selectFrom('idempotency_keys').select('locked_until').execute();
        if (dialect === 'postgres') expect(await uncoveredTables(stores[0].db)).toEqual([]);
      } finally {
        for (const s of stores) await s.destroy();
      }
    }
  });
});

if (dialects.includes('postgres')) {
  describe('migrations of one PostgreSQL schema and of another', () => {
    it('do not wait for each other: the migration lock is the schema’s', async () => {
      const [held] = await freshStore('postgres', 1);
      const [other] = await freshStore('postgres', 1);
      const holder = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL! });
      await holder.connect();
      try {
        const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(held.db)).rows[0].s;
        await holder.query(`select pg_advisory_lock(hashtextextended('reelbase migrations ' || $1, 0))`, [schema]);
        // The other schema migrates while this one's lock is held …
        expect((await migrateToLatest(other.db)).results?.length).toBeGreaterThan(0);
        // … and this one waits for it.
        let done = false;
        const waiting = migrateToLatest(held.db).then(() => (done = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(done).toBe(false);
        await holder.query(`select pg_advisory_unlock_all()`);
        await waiting;
        expect(done).toBe(true);
      } finally {
        await holder.end();
        await held.destroy();
        await other.destroy();
      }
    });

    it('sees only its own schema: another dropped meanwhile does not fail it, and its tables are not ours', async () => {
      const url = process.env.TEST_DATABASE_URL!;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      // Another deployment's (or test run's) schemas, made and dropped all along the migration.
      let churning = true;
      const churn = (async () => {
        for (let i = 0; churning; i++) {
          const name = `${TEST_SCHEMA_PREFIX}${process.env.REELBASE_TEST_RUN ?? 'norun'}_churn${i}`;
          await admin.query(`create schema ${name}; create table ${name}.kysely_migration (name text); create table ${name}.t (id serial primary key)`);
          await admin.query(`drop schema ${name} cascade`);
        }
      })();
      const [store] = await freshStore('postgres', 1);
      try {
        // Before: Kysely's introspector read every schema's tables and failed with 'schema … does not exist'.
        expect((await migrateToLatest(store.db)).error).toBeUndefined();
        const tables = await store.db.introspection.getTables();
        const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0].s;
        expect(new Set(tables.map((t) => t.schema))).toEqual(new Set([schema]));
        expect(tables.map((t) => t.name)).toContain('players');
        expect(tables.map((t) => t.name)).not.toContain('kysely_migration');
        const players = tables.find((t) => t.name === 'players')!;
        expect(players.columns.find((c) => c.name === 'id')).toMatchObject({ isAutoIncrementing: true, isNullable: false });
      } finally {
        churning = false;
        await churn;
        await admin.end();
        await store.destroy();
      }
    });
  });
}
