import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseOrganizationPayload } from '../../src/db/pg-change-notices.ts';
import { wrapPgPool } from '../../src/db/pg-connection.ts';
import { WriteReach } from '../../src/db/write-reach.ts';

/** A pool of one client whose answers the test gives: a command tag, or a lost connection. */
function fakePool() {
  const answers: Array<{ command: string; rowCount?: number } | Error | Array<{ command: string }>> = [];
  const client = {
    processID: 4242,
    query: async () => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    },
    release: () => {},
  };
  const pool = Object.assign(new EventEmitter(), { connect: async () => client, end: async () => {} });
  return { pool: pool as unknown as pg.Pool, client, answers };
}

function watched() {
  const { pool, answers } = fakePool();
  const reach = new WriteReach();
  reach.learn(new Map([['players delete', new Set(['events'])]]));
  const changes: Array<[readonly string[] | null, boolean]> = [];
  const backends = new Set<number>();
  const wrapped = wrapPgPool(pool, { reach, backends, onChange: (tables, committed) => changes.push([tables, committed]) });
  return { pool, wrapped, answers, changes, backends };
}

const lost = () => new Error('Connection terminated unexpectedly');

describe('wrapPgPool', () => {
  it("names the tables a statement reached, keeps a transaction's until its COMMIT, and knows its own backends", async () => {
    const { pool, wrapped, answers, changes, backends } = watched();
    const c = (await wrapped.connect()) as unknown as pg.PoolClient;
    expect(backends.has(4242)).toBe(true);
    answers.push({ command: 'UPDATE', rowCount: 1 });
    await c.query('update "events" set "html" = $1');
    answers.push({ command: 'START' }, { command: 'DELETE', rowCount: 1 }, { command: 'UPDATE', rowCount: 0 }, { command: 'COMMIT' });
    await c.query('start transaction isolation level serializable');
    await c.query('delete from "players" where "id" = $1');
    await c.query('update "tags" set "name" = $1');
    await c.query('commit');
    expect(changes).toEqual([
      [['events'], true],
      [['players', 'events'], false],
      [['players', 'events'], true],
    ]);
    pool.emit('remove', { processID: 4242 });
    expect(backends.has(4242)).toBe(false);
  });

  it('counts a write whose answer was lost as made, and a COMMIT whose answer was lost as done', async () => {
    const { wrapped, answers, changes } = watched();
    const c = (await wrapped.connect()) as unknown as pg.PoolClient;
    answers.push(lost());
    await expect(c.query('update "events" set "html" = $1')).rejects.toThrow();
    answers.push(lost());
    await expect(c.query('select * from "events"')).rejects.toThrow();
    answers.push({ command: 'BEGIN' }, { command: 'INSERT', rowCount: 1 }, lost(), lost());
    await c.query('begin');
    await c.query('insert into "players" ("name") values ($1)');
    // A failed statement inside the transaction makes nothing visible, and the transaction goes on.
    await expect(c.query('update "videos" set "name" = $1')).rejects.toThrow();
    await expect(c.query('commit')).rejects.toThrow();
    expect(changes).toEqual([
      [['events'], true],
      [['players'], false],
      [['players'], true],
    ]);
  });

  it('counts several statements in one text as a change of unknown reach', async () => {
    const { wrapped, answers, changes } = watched();
    const c = (await wrapped.connect()) as unknown as pg.PoolClient;
    answers.push([{ command: 'UPDATE' }, { command: 'DELETE' }]);
    await c.query('update "events" set "html" = \'x\'; delete from "tags"');
    expect(changes).toEqual([[null, true]]);
  });
});

describe('parseOrganizationPayload', () => {
  it("reads the table, the organization and which rows; anything else it does not understand is some of the rows, or anyone's", () => {
    expect(parseOrganizationPayload('events 4 insert')).toEqual({ table: 'events', organization: 4, rows: 'none' });
    expect(parseOrganizationPayload('events 4 row 17')).toEqual({ table: 'events', organization: 4, rows: 17 });
    // An earlier release's payload, and a transaction's rows past the ones told.
    expect(parseOrganizationPayload('events 4')).toEqual({ table: 'events', organization: 4, rows: 'some' });
    expect(parseOrganizationPayload('events ')).toEqual({ table: 'events', organization: null, rows: 'some' });
    expect(parseOrganizationPayload('events')).toEqual({ table: 'events', organization: null, rows: 'some' });
    for (const odd of ['events 4 row', 'events 4 row x', 'events 4 row 1.5', 'events 4 insert 3', 'events 4 row 17 more', 'events 4 delete'])
      expect(parseOrganizationPayload(odd)).toEqual({ table: 'events', organization: 4, rows: 'some' });
    expect(parseOrganizationPayload('events x row 17')).toEqual({ table: 'events', organization: null, rows: 'some' });
  });
});
