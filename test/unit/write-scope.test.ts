import { describe, expect, it } from 'vitest';
import { DummyDriver, type ExpressionBuilder, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import { organizationOf, writeScopeOf } from '../../src/db/write-scope.ts';
import { openDatabase } from '../../src/db/database.ts';
import { readReach } from '../../src/db/write-reach.ts';

const db = new Kysely<any>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new SqliteIntrospector(k),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

const of = (q: { toOperationNode(): unknown }) => organizationOf(q.toOperationNode() as never);

describe('organizationOf: whose rows a write can change, from its own tree', () => {
  it('an insert whose every row names one organization', () => {
    expect(of(db.insertInto('events').values({ organization_id: 4, name: 'a' }))).toBe(4);
    expect(
      of(
        db.insertInto('events').values([
          { organization_id: 4, name: 'a' },
          { organization_id: 4, name: 'b' },
        ]),
      ),
    ).toBe(4);
    // A row computed in SQL beside it does not matter; the organization's own value does.
    expect(of(db.insertInto('events').values((eb) => ({ organization_id: 4, player_id: eb.selectFrom('chapters').select('player_id') })))).toBe(4);
    expect(of(db.insertInto('events').values([{ organization_id: 4 }, { organization_id: 5 }]))).toBeNull();
    expect(of(db.insertInto('events').values({ name: 'a' }))).toBeNull();
    expect(of(db.insertInto('events').values({ organization_id: sql`4` }))).toBeNull();
    expect(of(db.insertInto('events').values({ organization_id: '4' }))).toBeNull();
    // An upsert or replace can change a row of anyone's; an insert from a select names no value.
    expect(
      of(
        db
          .insertInto('events')
          .values({ organization_id: 4 })
          .onConflict((oc) => oc.column('id').doUpdateSet({ name: 'x' })),
      ),
    ).toBeNull();
    expect(of(db.insertInto('events').values({ organization_id: 4 }).orReplace())).toBeNull();
    expect(of(db.replaceInto('events').values({ organization_id: 4 }))).toBeNull();
    expect(of(db.insertInto('events').columns(['organization_id']).expression(db.selectFrom('x').select('organization_id')))).toBeNull();
    expect(
      of(
        db
          .with('w', (q) => q.selectFrom('x').selectAll())
          .insertInto('events')
          .values({ organization_id: 4 }),
      ),
    ).toBeNull();
  });

  it('an update or delete whose conditions require one organization', () => {
    expect(of(db.updateTable('events').set({ name: 'x' }).where('organization_id', '=', 4).where('id', '=', 9))).toBe(4);
    expect(of(db.updateTable('events').set({ name: 'x' }).where('id', '=', 9).where('events.organization_id', '=', 4))).toBe(4);
    expect(of(db.deleteFrom('events').where('organization_id', '=', 4).where('id', '=', 9))).toBe(4);
    expect(of(db.deleteFrom('events').where((eb) => eb.and([eb('id', '>', 1), eb.and([eb('organization_id', '=', 4)])])))).toBe(4);
    expect(of(db.updateTable('events').set({ name: 'x' }).where('id', '=', 9))).toBeNull();
    expect(
      of(
        db
          .updateTable('events')
          .set({ name: 'x' })
          .where((eb) => eb.or([eb('organization_id', '=', 4), eb('id', '=', 9)])),
      ),
    ).toBeNull();
    expect(of(db.updateTable('events').set({ name: 'x' }).where('organization_id', '!=', 4))).toBeNull();
    expect(of(db.updateTable('events').set({ name: 'x' }).where('organization_id', 'in', [4]))).toBeNull();
    expect(
      of(
        db
          .updateTable('events')
          .set({ name: 'x' })
          .where('organization_id', '=', (eb: ExpressionBuilder<any, 'events'>) => eb.selectFrom('x').select('id')),
      ),
    ).toBeNull();
    // Moving rows to another organization changes that one's too.
    expect(of(db.updateTable('events').set({ organization_id: 5 }).where('organization_id', '=', 4))).toBeNull();
    expect(of(db.updateTable('events').from('players').set({ name: 'x' }).where('organization_id', '=', 4))).toBeNull();
    expect(of(db.selectFrom('events').selectAll().where('organization_id', '=', 4))).toBeNull();
    // A column set as raw SQL could be organization_id; SQLite's names are case-insensitive.
    expect(
      of(
        db
          .updateTable('events')
          .set(sql`organization_id`, 5)
          .where('organization_id', '=', 4),
      ),
    ).toBeNull();
    expect(of(db.updateTable('events').set({ Organization_Id: 5 }).where('organization_id', '=', 4))).toBeNull();
    expect(
      of(
        db
          .updateTable('events')
          .set({ name: 'x' })
          .where('organization_id', '=', 4)
          .modifyEnd(sql`returning *`),
      ),
    ).toBeNull();
    expect(of(db.deleteFrom('events').where('ORGANIZATION_ID', '=', 4))).toBe(4);
  });
});

describe('writeScopeOf: which existing rows of its table a write scoped to one organization can change', () => {
  const rows = (q: { toOperationNode(): unknown }) => writeScopeOf(q.toOperationNode() as never).rows;

  it('none for an insert, the one row an update or delete requires by id, some otherwise', () => {
    expect(rows(db.insertInto('events').values({ organization_id: 4, name: 'a' }))).toBe('none');
    expect(rows(db.updateTable('events').set({ html: 'x' }).where('organization_id', '=', 4).where('id', '=', 17))).toBe(17);
    expect(
      rows(
        db
          .updateTable('events')
          .set({ html: 'x' })
          .where((eb) => eb.and([eb('id', '=', 17), eb('organization_id', '=', 4)])),
      ),
    ).toBe(17);
    expect(rows(db.deleteFrom('events').where('organization_id', '=', 4).where('ID', '=', 17))).toBe(17);
    // Other rows: by another column, a range, an OR, a value not an integer, an id set by the update itself.
    expect(rows(db.updateTable('events').set({ html: 'x' }).where('organization_id', '=', 4))).toBe('some');
    expect(rows(db.updateTable('events').set({ html: 'x' }).where('organization_id', '=', 4).where('id', '>', 17))).toBe('some');
    expect(
      rows(
        db
          .updateTable('events')
          .set({ html: 'x' })
          .where((eb) => eb.or([eb('id', '=', 17), eb('id', '=', 18)])),
      ),
    ).toBe('some');
    expect(rows(db.deleteFrom('events').where('organization_id', '=', 4).where('id', '=', '17'))).toBe('some');
    expect(rows(db.updateTable('events').set({ id: 18 }).where('organization_id', '=', 4).where('id', '=', 17))).toBe('some');
    expect(
      rows(
        db
          .updateTable('events')
          .set({ html: sql`'x'` })
          .where('organization_id', '=', 4)
          .where('id', '=', 17),
      ),
    ).toBe(17);
  });
});

describe('the organization written, told to the SQLite driver as it runs the statement', () => {
  it("moves the statement's own table for its organization only; what it reaches, for every organization", async () => {
    const { db: real, clock, destroy } = openDatabase({});
    try {
      await sql`create table t (id integer primary key, organization_id integer not null, name text)`.execute(real);
      await sql`create table counts (organization_id integer primary key, n integer not null)`.execute(real);
      await sql`create trigger t_count after insert on t begin insert or ignore into counts values (new.organization_id, 0); end`.execute(real);
      clock.reach.learn(await readReach(real));
      const g = clock.generations;
      const tables = new Set(['t']);
      const counts = new Set(['counts']);
      const stamp = () => [g.ofOrganization(tables, 1), g.ofOrganization(tables, 2), g.ofOrganization(counts, 1)];
      const before = stamp();
      await real
        .insertInto('t' as never)
        .values({ organization_id: 2, name: 'a' })
        .execute();
      const after = stamp();
      expect(after[0]).toBe(before[0]);
      expect(after[1]).toBe(before[1] + 1);
      expect(after[2]).toBe(before[2] + 1);
      // Outside a statement nothing is being written.
      const { organizationBeingWritten } = await import('../../src/db/write-scope.ts');
      expect(organizationBeingWritten()).toBeNull();
      await real
        .updateTable('t' as never)
        .set({ name: 'b' } as never)
        .where('id' as never, '=', 1 as never)
        .execute();
      expect(stamp()[0]).toBe(before[0] + 1);
    } finally {
      await destroy();
    }
  });
});
