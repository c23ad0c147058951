import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { ReadCache, viewOf, type TablesRead } from '../../src/db/read-cache.ts';
import { WriteReach } from '../../src/db/write-reach.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChangeBell } from '../../src/db/change-bell.ts';
import { Generations, PgChangeClock, SqliteChangeClock } from '../../src/db/change-clock.ts';
import type { ChangeClock } from '../../src/db/change-clock.ts';

/** A clock whose changes a test makes: `move(tables)` (null: every table); `off` reads null. */
function fakeClock(off = false) {
  const generations = new Generations();
  const state = { off };
  const clock: ChangeClock & { move(tables?: string[] | null): void } = {
    generations,
    reach: new WriteReach(),
    learnReach: async () => {},
    now: () => (state.off ? null : generations.total),
    move: (tables: string[] | null = null) => generations.moved(tables),
  };
  return clock;
}

/** A load that reads `tables` (as `cachedRead` notes a query's tables) and answers `value`. */
function counter<T>(value: T, tables: string[] = ['rows']) {
  const load = Object.assign(async (read: TablesRead) => (tables.forEach((t) => read.add(t)), load.calls++, value), { calls: 0 });
  return load;
}

describe('ReadCache', () => {
  it('answers a hit without loading again or a promise, and freezes what it keeps', async () => {
    const cache = new ReadCache(fakeClock());
    const load = counter({ id: 1 });
    const first = await cache.read('row', 1, load);
    const second = cache.read('row', 1, load);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toBe(first);
    expect(load.calls).toBe(1);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('reads several keys: the kept ones from memory, the missing ones in one load, and nothing of a load a change overtook', async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const asked: number[][] = [];
    let moveDuringLoad = false;
    const load = async (read: TablesRead, keys: number[]) => {
      read.add('rows');
      asked.push(keys);
      if (moveDuringLoad) clock.move(['rows']);
      return new Map(keys.filter((k) => k !== 404).map((k) => [k, { id: k }]));
    };
    await cache.read('row', 1, counter({ id: 1 }));
    const found = await cache.readMany('row', [1, 2, 3, 404], load);
    expect([...found.keys()].sort()).toEqual([1, 2, 3]);
    expect(asked).toEqual([[2, 3, 404]]);
    expect(Object.isFrozen(found.get(2))).toBe(true);
    // Kept, and shared with `read`.
    expect(cache.readMany('row', [1, 2, 3], load)).not.toBeInstanceOf(Promise);
    expect(cache.read('row', 2, counter({ id: -1 }))).toBe(found.get(2));
    expect(cache.stats('row')).toMatchObject({ hits: 5, misses: 4 });
    // A change while the missing ones were read: answered, not kept.
    clock.move(['rows']);
    moveDuringLoad = true;
    expect((await cache.readMany('row', [1, 2], load)).size).toBe(2);
    moveDuringLoad = false;
    await cache.readMany('row', [1, 2], load);
    expect(asked.at(-1)).toEqual([1, 2]);
  });

  it('loads again once the clock moved', async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const load = counter({ id: 1 });
    await cache.read('row', 1, load);
    clock.move();
    await cache.read('row', 1, load);
    expect(load.calls).toBe(2);
  });

  it('keeps what was read from tables that did not change, and drops what was read from one that did', async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const token = counter({ id: 1 }, ['api_tokens', 'users']);
    const cta = counter({ id: 2 }, ['events']);
    await cache.read('token', 1, token);
    await cache.read('cta', 2, cta);
    clock.move(['events', 'event_counts']);
    await cache.read('token', 1, token);
    await cache.read('cta', 2, cta);
    expect([token.calls, cta.calls]).toEqual([1, 2]);
    clock.move(['users']);
    await cache.read('token', 1, token);
    await cache.read('cta', 2, cta);
    expect([token.calls, cta.calls]).toEqual([2, 2]);
    // A change of unknown reach (another process's commit) drops everything.
    clock.move(null);
    await cache.read('token', 1, token);
    await cache.read('cta', 2, cta);
    expect([token.calls, cta.calls]).toEqual([3, 3]);
    expect(cache.stats('token')).toEqual({ hits: 1, misses: 3, tables: ['api_tokens', 'users'] });
  });

  it('learns the tables of a namespace from every load, and a load of unknown tables makes any change drop it', async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    await cache.read('ns', 1, counter({ id: 1 }, ['a']));
    await cache.read('ns', 2, counter({ id: 2 }, ['b']));
    clock.move(['b']);
    const one = counter({ id: 1 }, ['a']);
    await cache.read('ns', 1, one);
    expect(one.calls).toBe(1);
    const raw = Object.assign(async (read: TablesRead) => ((read.unknown = true), { id: 3 }), {});
    await cache.read('ns', 3, raw);
    expect(cache.stats('ns').tables).toBeNull();
    clock.move(['elsewhere']);
    await cache.read('ns', 1, one);
    expect(one.calls).toBe(2);
  });

  it("keeps a row of one organization through writes that changed only another organization's rows of its tables", async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const mine = counter({ id: 1, org: 7 });
    const shared = counter({ id: 2, org: 7 });
    const read = async () => {
      await cache.read('scoped', 1, mine, (row) => row.org);
      await cache.read('unscoped', 2, shared);
    };
    await read();
    clock.generations.moved(['rows'], new Map([['rows', 8]]));
    await read();
    expect([mine.calls, shared.calls]).toEqual([1, 2]);
    // Its own organization's write, one that may have changed anyone's rows, and one of unknown reach drop it.
    for (const move of [() => clock.generations.moved(['rows'], new Map([['rows', 7]])), () => clock.move(['rows']), () => clock.move(null)]) {
      const before = mine.calls;
      move();
      await read();
      expect(mine.calls).toBe(before + 1);
    }
    // A write scoped to another table of the same statement leaves the table it also reached shared.
    clock.generations.moved(['other', 'rows'], new Map([['other', 8]]));
    await read();
    expect(mine.calls).toBe(5);
  });

  it("keeps a row read from several organizations' rows through writes of any other, and drops it on a write of any of them", async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const load = counter({ id: 1, orgs: [7, 9, 7] });
    const read = () => cache.read('scoped', 1, load, (row) => row.orgs);
    await read();
    clock.generations.moved(['rows'], new Map([['rows', 8]]));
    await read();
    expect(load.calls).toBe(1);
    for (const organization of [7, 9]) {
      clock.generations.moved(['rows'], new Map([['rows', organization]]));
      await read();
      await read();
      expect(load.calls).toBe(organization === 7 ? 2 : 3);
    }
    // No owner told (an empty list, or null): any organization's write drops it.
    const unowned = counter({ id: 2 });
    for (const owners of [[], null]) {
      const before = unowned.calls;
      await cache.read('unowned', owners === null ? 'null' : 'empty', unowned, () => owners);
      clock.generations.moved(['rows'], new Map([['rows', 8]]));
      await cache.read('unowned', owners === null ? 'null' : 'empty', unowned, () => owners);
      expect(unowned.calls).toBe(before + 2);
    }
  });

  it("keeps a row read by id through its organization's inserts and writes to its other rows; drops it on a write to it, to rows not told, or of unknown reach", async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const load = counter({ id: 5, org: 7 }, ['rows', 'parents']);
    const read = () => cache.read('row', 5, load, (row) => row.org, { table: 'rows', id: 5 });
    const scoped = (table: string, rows: 'none' | 'some' | number, organization = 7) =>
      clock.generations.moved([table], new Map([[table, organization]]), new Map([[table, rows]]));
    await read();
    for (const write of [() => scoped('rows', 'none'), () => scoped('rows', 6), () => scoped('rows', 6, 8), () => scoped('parents', 'none', 8)]) {
      write();
      await read();
    }
    expect(load.calls).toBe(1);
    // Its own row; its organization's rows not told which (rows given as 'some', or not given); its
    // organization's other table, even an insert there; a write that may be anyone's; one of unknown reach.
    const drops = [
      () => scoped('rows', 5),
      () => scoped('rows', 'some'),
      () => clock.generations.moved(['rows'], new Map([['rows', 7]])),
      () => scoped('parents', 'none'),
      () => clock.move(['rows']),
      () => clock.move(null),
    ];
    for (const [i, write] of drops.entries()) {
      write();
      await read();
      await read();
      expect(load.calls).toBe(i + 2);
    }
    // A load overtaken by another row's write is kept; by its own row's, not.
    const other = Object.assign(async (r: TablesRead) => (r.add('rows'), scoped('rows', 9), other.calls++, { id: 6, org: 7 }), { calls: 0 });
    await cache.read('row', 6, other, (row) => row.org, { table: 'rows', id: 6 });
    await cache.read('row', 6, other, (row) => row.org, { table: 'rows', id: 6 });
    expect(other.calls).toBe(1);
    const own = Object.assign(async (r: TablesRead) => (r.add('rows'), scoped('rows', 10), own.calls++, { id: 10, org: 7 }), { calls: 0 });
    await cache.read('row', 10, own, (row) => row.org, { table: 'rows', id: 10 });
    await cache.read('row', 10, own, (row) => row.org, { table: 'rows', id: 10 });
    expect(own.calls).toBe(2);
  });

  it('drops what a namespace kept when one of its loads reads tables it cannot tell, and from then on drops it on any change', async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const load = counter({ id: 1 }, ['rows', 'other']);
    // One change to both tables: their counts' sum moves by two, the clock's total by one.
    clock.move(['rows', 'other']);
    await cache.read('space', 1, load);
    const unknown = Object.assign(async (read: TablesRead) => ((read.unknown = true), { id: 2 }), {});
    await cache.read('space', 2, unknown);
    expect(cache.stats('space').tables).toBeNull();
    clock.move(['elsewhere']);
    await cache.read('space', 1, load);
    expect(load.calls).toBe(2);
  });

  it('follows at most 10,000 rows written one by one, and past that drops every row read by id of the table once', async () => {
    const generations = new Generations();
    const at = (id: number) => generations.ofRow(new Set(['rows']), 7, { table: 'rows', id });
    const write = (id: number) => generations.moved(['rows'], new Map([['rows', 7]]), new Map([['rows', id]]));
    write(1);
    const stamps = [at(1), at(2)];
    // Rows 1 and 3-10,001 are 10,000 followed: the next new one folds them.
    for (let id = 3; id <= 10_001; id++) write(id);
    expect(at(1)).toBe(stamps[0]);
    write(10_002);
    // Row 1 was written once and row 2 never: both sums moved when the rows followed were folded.
    expect(at(1)).not.toBe(stamps[0]);
    expect(at(2)).not.toBe(stamps[1]);
    const after = at(2);
    write(10_003);
    expect(at(2)).toBe(after);
  });

  it('does not keep a value when the clock moved while it was loading', async () => {
    const clock = fakeClock();
    const cache = new ReadCache(clock);
    const load = Object.assign(async (read: TablesRead) => (read.add('rows'), clock.move(['rows']), load.calls++, { id: 1 }), { calls: 0 });
    await cache.read('row', 1, load);
    await cache.read('row', 1, load);
    expect(load.calls).toBe(2);
    expect(cache.entries).toBe(0);
    // A change elsewhere meanwhile does not matter; one of unknown reach does.
    const calm = Object.assign(async (read: TablesRead) => (read.add('rows'), clock.move(['other']), { id: 2 }), {});
    await cache.read('row', 2, calm);
    expect(cache.entries).toBe(1);
    const unknown = Object.assign(async (read: TablesRead) => (read.add('rows'), clock.move(null), unknown.calls++, { id: 3 }), { calls: 0 });
    await cache.read('row', 3, unknown);
    await cache.read('row', 3, unknown);
    expect(unknown.calls).toBe(2);
  });

  it('never remembers a miss, and caches nothing without a clock', async () => {
    const cache = new ReadCache(fakeClock());
    const missing = counter<{ id: number } | undefined>(undefined);
    await cache.read('row', 9, missing);
    await cache.read('row', 9, missing);
    expect(missing.calls).toBe(2);
    const blind = new ReadCache(fakeClock(true));
    const load = counter({ id: 1 });
    await blind.read('row', 1, load);
    await blind.read('row', 1, load);
    expect(load.calls).toBe(2);
  });

  it('keeps namespaces apart, and starts over when full', async () => {
    const cache = new ReadCache(fakeClock(), 2);
    expect(await cache.read('a', 1, counter({ from: 'a' }))).toEqual({ from: 'a' });
    expect(await cache.read('b', 1, counter({ from: 'b' }))).toEqual({ from: 'b' });
    expect(cache.entries).toBe(2);
    await cache.read('a', 2, counter({ from: 'a2' }));
    expect(cache.entries).toBe(1);
    const again = counter({ from: 'a' });
    await cache.read('a', 1, again);
    expect(again.calls).toBe(1);
  });
});

describe('SqliteChangeClock', () => {
  it("moves on this connection's own changes at once, and on other connections' commits once it looks again", async () => {
    let version = 7;
    // Looks again after 200 ms: long enough that a busy machine does not look again between two lines.
    const clock = new SqliteChangeClock(() => version, 200);
    const start = clock.now();
    clock.changed('update "events" set "html" = ?');
    expect(clock.now()).toBe(start! + 1);
    version = 8;
    expect(clock.now()).toBe(start! + 1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(clock.now()).toBe(start! + 2);
    expect(clock.now()).toBe(start! + 2);
    clock.close();
    expect(clock.now()).toBeNull();
  });

  it('moves, and looks again at the next read, when data_version cannot be read for a busy log', () => {
    let busy = false;
    const clock = new SqliteChangeClock(() => {
      if (busy) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_RECOVERY' });
      return 7;
    }, 200);
    const start = clock.now()!;
    const lookNow = () => ((clock as unknown as { checkedAt: number }).checkedAt = -Infinity);
    busy = true;
    lookNow();
    expect(clock.now()).toBe(start + 1);
    // Looked at again at the very next read, which finds nothing new.
    busy = false;
    expect(clock.now()).toBe(start + 1);
    // Then not again for 200 ms.
    busy = true;
    expect(clock.now()).toBe(start + 1);
    // Anything but busy is not the clock's to hide.
    busy = false;
    const other = new SqliteChangeClock(() => {
      if (busy) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
      return 7;
    }, 0);
    busy = true;
    expect(() => other.now()).toThrow('disk I/O error');
  });
});

describe('SqliteChangeClock with change counts', () => {
  /** A clock that looks at every read, over counts and a data_version the test moves by hand. */
  async function counted() {
    const db = {
      version: 1,
      schema: 5,
      trusted: true,
      counts: new Map([
        ['events', 0],
        ['players', 0],
        ['chapters', 0],
      ]),
      onRead: () => {},
      /** events' organizations, with events' count at their last change (as reelbase_organization_changes keeps them). */
      eventsOf: new Map<number, number>(),
    };
    const organizationsSince = (table: string, since: number) =>
      table === 'events' && db.eventsOf.size > 0 ? [...db.eventsOf].filter(([, at]) => at > since).map(([organization]) => organization) : null;
    const clock = new SqliteChangeClock(
      () => db.version,
      0,
      () => db.schema,
      () => {
        db.onRead();
        return db.trusted ? { schema: db.schema, counts: new Map(db.counts), organizationsSince } : null;
      },
    );
    // events' triggers keep an FTS5 table, which counts nothing; a player deleted cascades to chapters.
    await clock.learnReach(
      async () =>
        new Map([
          ['events insert', new Set(['events_search'])],
          ['players delete', new Set(['chapters'])],
        ]),
    );
    const g = clock.generations;
    const moves = () => ({
      events: g.ofTable('events'),
      players: g.ofTable('players'),
      chapters: g.ofTable('chapters'),
      search: g.ofTable('events_search'),
      all: g.ofTable('none'),
    });
    /** Another connection's commit that changed rows of `tables`. */
    const commit = (...tables: string[]) => {
      for (const table of tables) db.counts.set(table, db.counts.get(table)! + 1);
      db.version++;
    };
    return { db, clock, moves, commit };
  }

  it("moves only the tables whose counts another connection's commit moved, and the uncounted ones they reach", async () => {
    const { clock, moves, commit } = await counted();
    clock.now(); // the counts read first
    let before = moves();
    commit('players');
    clock.now();
    // chapters count for themselves: a player deleted with its chapters would have moved their count too.
    expect(moves()).toEqual({ ...before, players: before.players + 1 });
    before = moves();
    commit('events');
    clock.now();
    expect(moves()).toEqual({ ...before, events: before.events + 1, search: before.search + 1 });
    // A commit to tables no cached read reads moves data_version, not the counts: nothing moves.
    before = moves();
    commit();
    clock.now();
    expect(moves()).toEqual(before);
  });

  it("moves a table of organizations for the organizations whose rows another connection's commit changed", async () => {
    const { db, clock, moves, commit } = await counted();
    const events = new Set(['events']);
    const of = (organization: number) => clock.generations.ofOrganization(events, organization);
    clock.now();
    const before = { ...moves(), five: of(5), six: of(6) };
    commit('events');
    db.eventsOf.set(5, db.counts.get('events')!);
    clock.now();
    // Its FTS table, which counts nothing, moves whole.
    expect({ ...moves(), five: of(5), six: of(6) }).toEqual({ ...before, events: before.events + 1, search: before.search + 1, five: before.five + 1 });
  });

  it('does not move again, at the next commit of another connection, what its own writes moved', async () => {
    const { db, clock, moves, commit } = await counted();
    clock.now();
    clock.changed('update "events" set "html" = ?');
    db.counts.set('events', 1); // its trigger, in our own statement
    clock.now(); // reads the counts again: no other connection committed meanwhile
    const before = moves();
    commit('players');
    clock.now();
    expect(moves()).toEqual({ ...before, players: before.players + 1 });
  });

  it("keeps the old counts when another connection commits between their read and data_version's, and compares with them at the next look", async () => {
    const { db, clock, moves, commit } = await counted();
    clock.now();
    clock.changed('update "events" set "html" = ?');
    db.counts.set('events', 1);
    db.onRead = () => {
      db.onRead = () => {};
      commit('players');
    };
    const before = moves();
    clock.now(); // read the counts again, and saw data_version move after them: not kept
    expect(moves()).toEqual(before);
    clock.now();
    // The players' change is not lost; our own events are moved once more, which is never stale.
    expect(moves()).toEqual({ ...before, players: before.players + 1, events: before.events + 1, search: before.search + 1 });
  });

  it('drops at once a commit that lands between the reads of data_version and of the counts, and not again at the next look', async () => {
    const { db, clock, moves, commit } = await counted();
    clock.now();
    const before = moves();
    commit('events');
    db.onRead = () => {
      db.onRead = () => {};
      commit('players');
    };
    clock.now();
    const after = { ...before, events: before.events + 1, search: before.search + 1, players: before.players + 1 };
    expect(moves()).toEqual(after);
    clock.now(); // data_version moved again (the players' commit); the counts did not
    expect(moves()).toEqual(after);
  });

  it('moves every table on a commit when the counts cannot be trusted, before they were first read, or across a schema change', async () => {
    const { db, clock, moves, commit } = await counted();
    // Never looked at yet: the first commit moves everything.
    let before = moves();
    commit('players');
    clock.now();
    expect(moves().all).toBe(before.all + 1);
    db.trusted = false; // inside a transaction, or a table without its triggers
    before = moves();
    commit('players');
    clock.now();
    expect(moves().all).toBe(before.all + 1);
    db.trusted = true;
    clock.now(); // read again
    before = moves();
    db.schema++;
    commit();
    clock.now();
    expect(moves().all).toBe(before.all + 1);
    // The reach is read again under the new schema; until then another commit moves everything too.
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.reach.learned).toBe(true);
    clock.now(); // the counts under the new schema
    before = moves();
    commit('players');
    clock.now();
    expect(moves()).toEqual({ ...before, players: before.players + 1 });
  });
});

describe('PgChangeClock with a change bell', () => {
  it("moves at once on another process's ring, not on its own, and not for a notification's echo", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-bell-'));
    const file = path.join(dir, 'change-bell.sqlite');
    const [a, b] = [new PgChangeClock(new ChangeBell(file)), new PgChangeClock(new ChangeBell(file))];
    try {
      a.listening(true);
      b.listening(true);
      const [a0, b0] = [a.now(), b.now()];
      // A write inside a transaction moves only a's clock: b could not see it yet.
      a.changed(['events'], false);
      expect(a.now()).toBe(a0! + 1);
      expect(b.now()).toBe(b0);
      a.changed(['events'], true);
      expect(a.now()).toBe(a0! + 2);
      // b heard a's ring synchronously: no notification needed.
      expect(b.now()).toBe(b0! + 1);
      expect(b.now()).toBe(b0! + 1);
      // A notification moves only the clock that hears it; it rings no one.
      b.notified();
      expect(b.now()).toBe(b0! + 2);
      expect(a.now()).toBe(a0! + 2);
    } finally {
      a.close();
      b.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PgChangeClock with a change bell, by what each ring changed', () => {
  it("moves only what another process's commit changed: its tables, of the organization it wrote; anything for a change of unknown reach, or for rings pruned before it looked", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-bell-'));
    const file = path.join(dir, 'change-bell.sqlite');
    const [a, b] = [new PgChangeClock(new ChangeBell(file)), new PgChangeClock(new ChangeBell(file))];
    const events = new Set(['events']);
    const seen = () => ({
      everything: b.generations.ofTable('test_no_such_table'),
      players: b.generations.ofTable('players'),
      events5: b.generations.ofOrganization(events, 5),
      events6: b.generations.ofOrganization(events, 6),
    });
    try {
      a.listening(true);
      b.listening(true);
      b.now();
      let before = seen();
      a.changed(['events'], true, new Map([['events', 5]]), new Map([['events', 9]]));
      b.now();
      expect(seen()).toEqual({ ...before, events5: before.events5 + 1 });
      before = seen();
      a.changed(['events', 'players'], true);
      b.now();
      expect(seen()).toEqual({ ...before, players: before.players + 1, events5: before.events5 + 1, events6: before.events6 + 1 });
      before = seen();
      a.changed(null, true);
      b.now();
      expect(seen().everything).toBe(before.everything + 1);
      // More rings than are kept, before b looked: what the pruned ones changed is not known.
      before = seen();
      for (let i = 0; i < 12_000; i++) a.changed(['players'], true);
      b.now();
      expect(seen().everything).toBe(before.everything + 1);
      before = seen();
      a.changed(['players'], true);
      b.now();
      expect(seen()).toEqual({ ...before, players: before.players + 1 });
      // A process of an earlier release rings its one counter: what it changed is not told.
      const earlier = new Database(file);
      earlier.exec('create table if not exists bell (id integer primary key, rings integer not null)');
      earlier.exec('insert or ignore into bell (id, rings) values (1, 0)');
      b.now();
      before = seen();
      earlier.exec('update bell set rings = rings + 1 where id = 1');
      earlier.close();
      b.now();
      expect(seen().everything).toBe(before.everything + 1);
    } finally {
      a.close();
      b.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PgChangeClock with a change bell that fails', () => {
  it('keeps the write a success, caches nothing while the bell is down, and caches again once it rings', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-bell-'));
    const bell = new ChangeBell(path.join(dir, 'change-bell.sqlite'));
    const clock = new PgChangeClock(bell);
    const ring = vi.spyOn(bell, 'ring');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      clock.listening(true);
      expect(clock.now()).not.toBeNull();
      ring.mockImplementationOnce(() => {
        throw new Error('database is locked');
      });
      expect(() => clock.changed(null, true)).not.toThrow();
      expect(clock.now()).toBeNull();
      expect(String(stderr.mock.calls[0]?.[0])).toMatch(/change bell failed \(database is locked\)/);
      clock.changed(null, true);
      expect(clock.now()).not.toBeNull();
    } finally {
      stderr.mockRestore();
      clock.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('viewOf', () => {
  const toView = (row: { id: number }) => ({ id: row.id, label: `#${row.id}` });

  it("makes a cached (frozen) row's view once, shared and frozen", () => {
    const row = Object.freeze({ id: 7 });
    const first = viewOf(row, toView);
    expect(viewOf(row, toView)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // Another view of the same row is its own.
    const other = (r: { id: number }) => ({ n: r.id });
    expect(viewOf(row, other)).toEqual({ n: 7 });
    expect(viewOf(row, toView)).toBe(first);
  });

  it('makes a fresh view of any other row every time', () => {
    const row = { id: 8 };
    const first = viewOf(row, toView);
    expect(viewOf(row, toView)).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(false);
  });
});
