import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { wrapSqlite } from '../../src/db/sqlite-connection.ts';

/** The rows Kysely gets from the wrapper are those better-sqlite3 makes itself: keys, their order, values. */
describe('rows read through the SQLite wrapper', () => {
  const raw = new SqliteDatabase(':memory:');
  raw.exec(`create table t (id integer primary key, name text, n real, data blob, flag integer, empty text);
    insert into t values (1, 'a', 1.5, x'00ff', 1, null), (2, 'b', -2, null, 0, null)`);
  const wrapped = wrapSqlite(raw, () => {});

  const same = (sql: string, params: unknown[] = []) => {
    const expected = raw.prepare(sql).all(...params);
    const got = wrapped.prepare(sql).all(params);
    expect(got).toEqual(expected);
    for (let i = 0; i < got.length; i++) expect(Object.keys(got[i] as object)).toEqual(Object.keys(expected[i] as object));
    return got;
  };

  it('match better-sqlite3’s own objects, for every kind of value', () => {
    expect(same('select * from t order by id')).toHaveLength(2);
    same('select id, name as "the name", count(*) over () as total from t where id > ?', [0]);
    same('select 1 as "a.b", \'x\' as "with ""quotes""", null as "", 2 as "3"');
    same('select * from t where id = ?', [99]);
  });

  it('keep the last of duplicate names, in the first one’s place', () => {
    const [row] = same('select 1 as a, 2 as b, 3 as a');
    expect(row).toEqual({ a: 3, b: 2 });
  });

  it('make a column named __proto__ an own property (an object literal would set the prototype)', () => {
    // better-sqlite3 itself differs by Node version (an own property on 24, the prototype set on 20).
    const [row] = wrapped.prepare('select 1 as "__proto__", 2 as b').all([]) as object[];
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe(1);
    expect(Object.keys(row)).toEqual(['__proto__', 'b']);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
  });

  it('answer the rows of a write with RETURNING, and each read afresh', () => {
    const got = wrapped.prepare('insert into t (name) values (?) returning id, name').all(['c']) as Array<{ id: number; name: string }>;
    expect(got).toEqual([{ id: 3, name: 'c' }]);
    const first = wrapped.prepare('select name from t where id = ?').all([3]) as object[];
    const second = wrapped.prepare('select name from t where id = ?').all([3]) as object[];
    expect(second).toEqual(first);
    expect(second[0]).not.toBe(first[0]);
  });

  it('reads the columns again after the schema changed, by this connection or by another', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-rows-'));
    const file = path.join(dir, 'db.sqlite');
    const mine = new SqliteDatabase(file);
    const theirs = new SqliteDatabase(file);
    try {
      const db = wrapSqlite(mine, () => {});
      db.prepare('create table s (id integer primary key, a text)').run([]);
      db.prepare("insert into s values (1, 'x')").run([]);
      const select = 'select * from s';
      expect(db.prepare(select).all([])).toEqual([{ id: 1, a: 'x' }]);
      // Its own: at once, and a column added.
      db.prepare("alter table s add column b text default 'y'").run([]);
      expect(db.prepare(select).all([])).toEqual([{ id: 1, a: 'x', b: 'y' }]);
      // Another connection's, as many columns under other names: once a millisecond has passed.
      theirs.exec('alter table s rename column a to c');
      await new Promise((resolve) => setTimeout(resolve, 3));
      expect(db.prepare(select).all([])).toEqual([{ id: 1, c: 'x', b: 'y' }]);
    } finally {
      mine.close();
      theirs.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
