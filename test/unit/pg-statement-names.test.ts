import { describe, expect, it } from 'vitest';
import { isAnalysisError, isPoolerLoss, isStalePlan, StatementNames } from '../../src/db/pg-statement-names.ts';

describe('StatementNames', () => {
  it('names a data statement from its third sending, by a digest of its text, the same name every time after', () => {
    const names = new StatementNames();
    const text = 'select * from "events" where "id" = $1';
    expect(names.nameOf(text)).toBeUndefined();
    expect(names.nameOf(text)).toBeUndefined();
    const name = names.nameOf(text);
    expect(name).toMatch(/^reelbase_[\w-]{32}$/);
    expect(names.nameOf(text)).toBe(name);
    // Another process (another pool) names the same text alike, and another text otherwise.
    const elsewhere = new StatementNames(1);
    expect(elsewhere.nameOf(text)).toBe(name);
    expect(elsewhere.nameOf('select * from "events" where "id" = $2')).not.toBe(name);
  });

  it('leaves transaction control and DDL unnamed', () => {
    const names = new StatementNames(1);
    for (const text of ['begin', 'commit', 'savepoint "a"', 'alter table "events" add column "x" int', 'create index x on y (z)', 'set search_path to a']) {
      expect(names.nameOf(text)).toBeUndefined();
    }
    expect(names.nameOf('with x as (select 1) select * from x')).toBeDefined();
    expect(names.nameOf('insert into "tags" ("name") values ($1)')).toBeDefined();
  });

  it('names at most max texts', () => {
    const names = new StatementNames(1, 2);
    expect(names.nameOf('select 1')).toBeDefined();
    expect(names.nameOf('select 2')).toBeDefined();
    expect(names.nameOf('select 3')).toBeUndefined();
    expect(names.nameOf('select 1')).toBeDefined();
  });

  it('sends a refused text unnamed for good', () => {
    const names = new StatementNames(1);
    expect(names.nameOf('select * from "a"')).toBeDefined();
    names.refuse('select * from "a"');
    expect(names.nameOf('select * from "a"')).toBeUndefined();
    expect(names.nameOf('select * from "a"')).toBeUndefined();
    expect(names.nameOf('select * from "b"')).toBeDefined();
  });

  it("tells PostgreSQL's stale plan from other errors", () => {
    expect(isStalePlan(Object.assign(new Error('cached plan must not change result type'), { code: '0A000' }))).toBe(true);
    // In the server's language: told by the function that raised it.
    expect(
      isStalePlan(Object.assign(new Error('le plan en cache ne doit pas modifier le type en résultat'), { code: '0A000', routine: 'RevalidateCachedQuery' })),
    ).toBe(true);
    expect(isStalePlan(Object.assign(new Error('cannot do that'), { code: '0A000' }))).toBe(false);
    expect(isStalePlan(new Error('cached plan must not change result type'))).toBe(false);
    expect(isStalePlan(undefined)).toBe(false);
  });

  it('names nothing once stopped (a pooler lost a prepared statement)', () => {
    const names = new StatementNames(1);
    expect(names.nameOf('select 1')).toBeDefined();
    expect(names.stop()).toBe(true);
    expect(names.stop()).toBe(false);
    expect(names.nameOf('select 1')).toBeUndefined();
    expect(names.nameOf('select 2')).toBeUndefined();
    expect(isPoolerLoss(Object.assign(new Error('prepared statement "reelbase_1" does not exist'), { code: '26000' }))).toBe(true);
    expect(isPoolerLoss(Object.assign(new Error('prepared statement "reelbase_1" already exists'), { code: '42P05' }))).toBe(true);
    expect(isPoolerLoss(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
  });

  it('tells an error of analysis (class 42) from one of running', () => {
    expect(isAnalysisError(Object.assign(new Error('operator does not exist: integer = text'), { code: '42883' }))).toBe(true);
    expect(isAnalysisError(Object.assign(new Error('column "code" is of type integer but expression is of type text'), { code: '42804' }))).toBe(true);
    expect(isAnalysisError(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toBe(false);
    expect(isAnalysisError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe(false);
    expect(isAnalysisError(new Error('no code'))).toBe(false);
    expect(isAnalysisError(undefined)).toBe(false);
  });
});
