import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';

interface Codes {
  codes: { id: number; code: string };
}

/**
 * A statement sent again and again is compiled once: by SQLite for every statement, by PostgreSQL for
 * the ones Reelbase prepares (src/db/pg-statement-names.ts). Another process's migration can change a
 * table's columns under it; the next request must still answer.
 */
describe.each(dialects)('recurring statements on %s', (dialect) => {
  let t: TestApp;
  let dir: string;
  let other: Database;
  let org: OrgContext;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-prepared-'));
    t = await createTestApp(dialect, {}, { sqlitePath: path.join(dir, 'reelbase.sqlite') });
    other = t.openAnother();
    org = await createOrg(t);
  });

  afterAll(async () => {
    await other.destroy();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a recurring list as before after another process adds a column to its table', async () => {
    const player = await createPlayer(org.api);
    const chapter = player.chapters_attributes[0].id as number;
    const ids: number[] = [];
    for (let second = 1; second <= 3; second++) {
      const res = await org.api.post(`${P}/ctas`, { chapter_id: chapter, second, duration: 5, width: 200, html: `cta ${second}` });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const listed = async () => {
      const res = await org.api.get(`${P}/chapters/${chapter}/ctas?per_page=20`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.ctas as Array<{ id: number }>).map((c) => c.id);
    };
    for (let i = 0; i < 5; i++) expect(await listed()).toEqual(ids);

    // The statement's result now has one more column: a plan prepared for the old ones is stale.
    await sql`alter table events add column prepared_test_extra integer`.execute(other.db);
    for (let i = 0; i < 5; i++) expect(await listed()).toEqual(ids);
  });
});

if (dialects.includes('postgres')) {
  describe('prepared statements on postgres', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp('postgres');
    });
    afterAll(() => t.close());

    it('prepares a data statement on the backend that sends it again, and not a one-off', async () => {
      await t.database.db.connection().execute(async (db) => {
        const prepared = async () => (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((r) => r.statement);
        await db.selectFrom('players').selectAll().where('id', '=', 1).execute();
        expect((await prepared()).filter((s) => s.includes('from "players"'))).toEqual([]);
        await db.selectFrom('players').selectAll().where('id', '=', 2).execute();
        await db.selectFrom('players').selectAll().where('id', '=', 3).execute();
        expect((await prepared()).filter((s) => s.includes('from "players"'))).toEqual(['select * from "players" where "id" = $1']);
      });
    });

    it('answers a prepared select again, unnamed, once another connection changed its columns', async () => {
      const lone = await createTestApp('postgres');
      const migrator = lone.openAnother();
      try {
        await lone.database.db.connection().execute(async (db) => {
          const read = () => db.selectFrom('tags').selectAll().where('id', '=', 0).execute();
          for (let i = 0; i < 3; i++) await read();
          const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
          expect(prepared.rows.map((r) => r.statement)).toContain('select * from "tags" where "id" = $1');
          // As a rolling upgrade's migration in another process would.
          await sql`alter table tags add column stale_plan_test integer`.execute(migrator.db);
          expect(await read()).toEqual([]);
          expect(await read()).toEqual([]);
        });
      } finally {
        await migrator.destroy();
        await lone.close();
      }
    });

    it('answers a prepared statement again, unnamed, once another connection changed the type of a column it compares', async () => {
      const lone = await createTestApp('postgres');
      const migrator = lone.openAnother();
      try {
        await sql`create table codes (id integer primary key, code text)`.execute(lone.database.db);
        await sql`insert into codes values (1, '7')`.execute(lone.database.db);
        await (lone.database.db as unknown as Kysely<Codes>).connection().execute(async (db) => {
          // PostgreSQL infers $1 as text, the column's type, when it first prepares the statement.
          const read = () => db.selectFrom('codes').select('id').where('code', '=', '7').execute();
          for (let i = 0; i < 3; i++) expect(await read()).toEqual([{ id: 1 }]);
          const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
          expect(prepared.rows.map((r) => r.statement)).toContain('select "id" from "codes" where "code" = $1');
          await sql`alter table codes alter column code type integer using code::integer`.execute(migrator.db);
          expect(await read()).toEqual([{ id: 1 }]);
          expect(await read()).toEqual([{ id: 1 }]);
          // A statement wrong in itself fails as it would unnamed.
          const wrong = () => db.selectFrom('codes').select('id').where(sql.ref('no_such_column'), '=', 1).execute();
          for (let i = 0; i < 3; i++) await expect(wrong()).rejects.toMatchObject({ code: '42703' });
        });
      } finally {
        await migrator.destroy();
        await lone.close();
      }
    });

    it('goes on unnamed once a prepared statement is lost on the way, as behind a pooler in transaction mode', async () => {
      const lone = await createTestApp('postgres');
      const warnings: Error[] = [];
      const heard = (w: Error) => warnings.push(w);
      process.on('warning', heard);
      try {
        await lone.database.db.connection().execute(async (db) => {
          const read = () => db.selectFrom('players').selectAll().where('id', '=', 1).execute();
          for (let i = 0; i < 3; i++) await read();
          // The backend forgets it; the client still believes it prepared: its next run names it alone.
          await sql`deallocate all`.execute(db);
          expect(await read()).toEqual([]);
          for (let i = 0; i < 3; i++) await db.selectFrom('tags').selectAll().where('id', '=', i).execute();
          expect((await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(db)).rows[0].n).toBe(0);
        });
        // Said once, so that an operator learns why the database plans every statement again.
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.filter((w) => (w as { code?: string }).code === 'REELBASE_PG_UNNAMED')).toHaveLength(1);
      } finally {
        process.off('warning', heard);
        await lone.close();
      }
    });
  });
}
