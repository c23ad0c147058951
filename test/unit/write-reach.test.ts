import { describe, expect, it } from 'vitest';
import { WriteReach, writeOf } from '../../src/db/write-reach.ts';

describe('writeOf', () => {
  it('tells the table and the operations of the statements Kysely compiles', () => {
    expect(writeOf('insert into "events" ("html") values (?) returning *')).toEqual({ table: 'events', ops: ['insert'] });
    expect(writeOf('insert or ignore into "tags" ("name") values (?)')).toEqual({ table: 'tags', ops: ['insert'] });
    expect(writeOf('insert into "rate_limits" ("k") values (?) on conflict ("k") do update set "n" = "n" + 1')).toEqual({
      table: 'rate_limits',
      ops: ['insert', 'update'],
    });
    expect(writeOf('insert or replace into "tags" ("name") values (?)')).toEqual({ table: 'tags', ops: ['insert', 'update', 'delete'] });
    expect(writeOf('replace into "tags" ("name") values (?)')?.ops).toEqual(['insert', 'update', 'delete']);
    expect(writeOf('update "players" set "name" = ? where "id" = ?')).toEqual({ table: 'players', ops: ['update'] });
    expect(writeOf('update or replace "tags" set "name" = ?')).toEqual({ table: 'tags', ops: ['update', 'delete'] });
    expect(writeOf('  delete from "players" where "id" = ?')).toEqual({ table: 'players', ops: ['delete'] });
  });

  it('answers null for what it cannot tell', () => {
    for (const statement of [
      'with "x" as (select 1) update "players" set "name" = ?',
      'update "public"."players" set "name" = ?',
      'truncate "players"',
      'create table "later" ("id" integer)',
      'select * from "players"',
      'update players set name = ?',
    ]) {
      expect(writeOf(statement)).toBeNull();
    }
  });
});

describe('WriteReach', () => {
  it('follows a write to what it reaches, and knows nothing before it has learnt the schema', () => {
    const reach = new WriteReach();
    expect(reach.of('delete from "players" where "id" = ?').tables).toBeNull();
    reach.learn(
      new Map([
        ['players delete', new Set(['chapters', 'events'])],
        ['events insert', new Set(['event_counts'])],
        ['opaque update', null],
      ]),
    );
    expect(reach.of('delete from "players" where "id" = ?').tables).toEqual(['players', 'chapters', 'events']);
    expect(reach.of('update "players" set "name" = ?').tables).toEqual(['players']);
    expect(reach.of('insert into "events" ("a") values (?) on conflict do update set "a" = 1').tables).toEqual(['events', 'event_counts']);
    expect(reach.of('update "opaque" set "a" = ?').tables).toBeNull();
    expect(reach.of('insert into "opaque" ("a") values (?)').tables).toEqual(['opaque']);
    expect(reach.of('truncate "players"').tables).toBeNull();
  });
});
