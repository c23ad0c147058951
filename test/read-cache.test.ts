import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { readCacheOf } from '../src/db/read-cache.ts';
import { UNCACHED_TABLES } from '../src/db/uncached-tables.ts';
import { readReach } from '../src/db/write-reach.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { uncoveredTables } from '../src/db/pg-change-triggers.ts';
import { CHANGES_TABLE, ORGANIZATION_CHANGES_TABLE, uncountedTables } from '../src/db/sqlite-change-counts.ts';
import { ORGANIZATION_CHANNEL } from '../src/db/pg-change-notices.ts';
import { pgDriver } from '../src/db/pg-driver.ts';
import { createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { BROWSER_UA, createOrg, createPlayer, createUser, userClient, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A CTA on the chapter, through the API (the response; 201 when it was made). */
const postCta = (api: Client, chapterId: number, html: string) => api.post(`${P}/ctas`, { chapter_id: chapterId, second: 1, duration: 5, width: 200, html });

/**
 * Token lookups and records read by id are answered from memory while nothing in the database has
 * changed (src/db/read-cache.ts). These tests read everything twice first, so that the second read
 * is a cached one, then change the database and check that the next request sees the change.
 */
describe.each(dialects)('read cache on %s', (dialect) => {
  let t: TestApp;
  let dir: string;
  let other: Database;
  let org: OrgContext;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-cache-'));
    // A file, not :memory:, so that a second connection (another process) can open the same database.
    t = await createTestApp(dialect, {}, { sqlitePath: path.join(dir, 'reelbase.sqlite') });
    other = t.openAnother();
    org = await createOrg(t);
  });

  afterAll(async () => {
    await other.destroy();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function newCta(api = org.api) {
    const player = await createPlayer(api);
    const res = await postCta(api, player.chapters_attributes[0].id, 'before');
    expect(res.status).toBe(201);
    return res.body as { id: number };
  }

  /**
   * A write by another connection, as another process would make it; then the wait before the next
   * request must see it. SQLite: a millisecond (data_version is read again once one has passed).
   * PostgreSQL: until the write's change notifications arrived (`notificationsLanded`).
   */
  async function elsewhere(write: (db: Database['db']) => Promise<unknown>) {
    await write(other.db);
    await notificationsLanded();
  }

  let fences = 0;
  /**
   * Until the change notifications of every commit made so far have arrived. PostgreSQL delivers them
   * in commit order, so one sent now (through our own pool, as a table no read reads) arrives after
   * them all; a fixed wait was too short on a loaded machine. SQLite: a millisecond.
   */
  async function notificationsLanded() {
    if (dialect === 'sqlite') return sleep(3);
    const fence = `test_fence_${++fences}`;
    const generations = t.database.clock.generations;
    const arrived = () => generations.ofTable(fence) > generations.ofTable('test_fence_none');
    await sql`select pg_notify('reelbase_changes_tables', current_schema() || ' ' || ${fence})`.execute(t.database.db);
    for (const deadline = Date.now() + 5_000; !arrived(); await sleep(1)) {
      if (Date.now() > deadline) throw new Error('our own notification did not arrive within 5 s');
    }
  }

  it("a viewer's report (analytics_events and its rate limit's counter, which no cached read reads) leaves the change clock alone; a CTA write moves it", async () => {
    const player = await createPlayer(org.api);
    const report = (load: string) =>
      t.app.inject({
        method: 'POST',
        url: `/watch/${player.uuid}/analytics`,
        headers: { 'user-agent': BROWSER_UA },
        payload: { type: 'view', percent_watched: 0, chapter: 0, player_load_id: load, visitor_uuid: 'v' },
      });
    await notificationsLanded(); // of the setup's writes
    const before = t.database.clock.now();
    for (const load of ['a', 'b', 'c']) expect((await report(load)).statusCode).toBe(204);
    await sleep(dialect === 'postgres' ? 100 : 3);
    expect(await t.database.db.selectFrom('analytics_events').select('id').where('player_id', '=', player.id).execute()).toHaveLength(3);
    expect(t.database.clock.now()).toBe(before);
    await newCta();
    expect(t.database.clock.now()).not.toBe(before);
  });

  async function readTwice(url: string, api = org.api) {
    const first = await api.get(url);
    const second = await api.get(url);
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    // A hit's body, serialized once per cached row, is byte for byte what a fresh read answers.
    expect(second.raw).toBe(first.raw);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    return second;
  }

  it('answers a change another connection committed on the next request', async () => {
    const cta = await newCta();
    expect((await readTwice(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
    await elsewhere((db) => db.updateTable('events').set({ html: 'changed elsewhere' }).where('id', '=', cta.id).execute());
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('changed elsewhere');
  });

  it('refuses a token another connection deleted, on the next request', async () => {
    const viewer = await org.as('viewer');
    await readTwice(`${P}/players`, viewer);
    await elsewhere((db) => db.deleteFrom('api_tokens').where('role', '=', 'viewer').where('organization_id', '=', org.organizationId).execute());
    expect((await viewer.get(`${P}/players`)).status).toBe(401);
  });

  it("follows a role changed by another connection, and stops a removed user's token", async () => {
    const user = await createUser(org.api, { role_id: 2 });
    const asUser = await userClient(t, org.organizationId, user.id, 'admin');
    const cta = await newCta();
    expect((await asUser.patch(`${P}/ctas/${cta.id}`, { html: 'by an admin' })).status).toBe(200);
    await readTwice(`${P}/ctas/${cta.id}`, asUser);
    await elsewhere((db) => db.updateTable('users').set({ role: 'viewer' }).where('id', '=', user.id).execute());
    expect((await asUser.patch(`${P}/ctas/${cta.id}`, { html: 'by a viewer' })).status).toBe(403);
    expect((await asUser.get(`${P}/ctas/${cta.id}`)).body.html).toBe('by an admin');
    await elsewhere((db) => db.deleteFrom('users').where('id', '=', user.id).execute());
    expect((await asUser.get(`${P}/ctas/${cta.id}`)).status).toBe(401);
  });

  it('answers events by id from the same cache, each route with its own body', async () => {
    const cta = await newCta();
    const asCta = await readTwice(`${P}/ctas/${cta.id}`);
    const asEvent = await readTwice(`${P}/events/${cta.id}`);
    expect(Object.keys(asCta.body)).not.toEqual(Object.keys(asEvent.body));
    expect(asEvent.body).toMatchObject({ id: cta.id, event_type: 'simple_overlay', html: 'before' });
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).raw).toBe(asCta.raw);
  });

  it('sees its own writes at once, with no turn in between', async () => {
    const cta = await newCta();
    await readTwice(`${P}/ctas/${cta.id}`);
    const [patched, read] = [await org.api.patch(`${P}/ctas/${cta.id}`, { html: 'after' }), await org.api.get(`${P}/ctas/${cta.id}`)];
    expect(patched.status).toBe(200);
    expect(read.body.html).toBe('after');
    expect((await org.api.delete(`${P}/ctas/${cta.id}`)).status).toBe(200);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).status).toBe(404);
  });

  it("answers another organization's cached record like a missing one", async () => {
    const cta = await newCta();
    const stranger = await createOrg(t);
    await readTwice(`${P}/ctas/${cta.id}`);
    const res = await stranger.api.get(`${P}/ctas/${cta.id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect((await stranger.api.patch(`${P}/ctas/${cta.id}`, { html: 'not yours' })).status).toBe(404);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
  });

  it('a write drops only the cached reads of the tables it may have changed: a player renamed keeps the CTAs and the tokens', async () => {
    const player = await createPlayer(org.api);
    const cta = await newCta();
    // PostgreSQL: the notifications of our own commits arrive too, and move the tables they name again:
    // a read while the CTA's were on their way would not be kept.
    await notificationsLanded();
    await readTwice(`${P}/ctas/${cta.id}`);
    await notificationsLanded();
    const cache = readCacheOf(t.database.db)!;
    const before = { event: cache.stats('event'), token: cache.stats('token') };
    expect((await org.api.patch(`${P}/players/${player.id}`, { player: { name: 'Renamed' } })).status).toBe(200);
    await notificationsLanded();
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
    const after = { event: cache.stats('event'), token: cache.stats('token') };
    expect(after.event).toMatchObject({ hits: before.event.hits + 1, misses: before.event.misses });
    expect(after.token).toMatchObject({ hits: before.token.hits + 2, misses: before.token.misses });
    expect(after.event.tables).toEqual(['events']);
    expect(after.token.tables).toEqual(['api_tokens', 'users']);
    // The CTA written: its next read is a fresh one.
    expect((await org.api.patch(`${P}/ctas/${cta.id}`, { html: 'after' })).status).toBe(200);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('after');
    expect(cache.stats('event').misses).toBe(before.event.misses + 1);
  });

  it("another connection's writes to tables no cached read reads (a viewer's rate limit, a job) leave every cached read", async () => {
    const cta = await newCta();
    await notificationsLanded();
    await readTwice(`${P}/ctas/${cta.id}`);
    await notificationsLanded();
    const cache = readCacheOf(t.database.db)!;
    const before = cache.stats('event');
    // What moves the cached CTA (the fences of `notificationsLanded` move tables of their own).
    const { generations } = t.database.clock;
    const moves = () => [generations.ofTable('events'), generations.ofTable('test_no_such_table')];
    const start = moves();
    await other.db
      .insertInto('rate_limits')
      .values({ key: `test-${cta.id}`, count: 1, reset_at: Date.now() })
      .execute();
    await other.db.updateTable('rate_limits').set({ count: 2 }).where('key', '=', `test-${cta.id}`).execute();
    // SQLite: its data_version moved, and the counts say no cached table changed. PostgreSQL: nothing notified.
    await notificationsLanded();
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
    expect(cache.stats('event')).toMatchObject({ hits: before.hits + 1, misses: before.misses });
    expect(moves()).toEqual(start);
  });

  it("another connection's commit drops the cached reads of the tables it changed, however it changed them: a player renamed keeps the CTAs; a player deleted drops them through the cascade", async () => {
    const player = await createPlayer(org.api);
    const res = await postCta(org.api, player.chapters_attributes[0].id, 'before');
    const [ctaUrl, playerUrl] = [`${P}/ctas/${res.body.id}`, `${P}/players/${player.id}`];
    await readTwice(ctaUrl);
    await readTwice(playerUrl);
    const cache = readCacheOf(t.database.db)!;
    const everything = () => t.database.clock.generations.ofTable('test_no_such_table');
    const [start, before] = [everything(), cache.stats('event')];
    await elsewhere((db) => db.updateTable('players').set({ name: 'Renamed elsewhere' }).where('id', '=', player.id).execute());
    expect((await org.api.get(playerUrl)).body.name).toBe('Renamed elsewhere');
    expect((await org.api.get(ctaUrl)).body.html).toBe('before');
    expect(cache.stats('event')).toMatchObject({ hits: before.hits + 1, misses: before.misses });
    expect(everything()).toBe(start);
    // The statement names the players only: the CTA goes by the foreign keys' cascade, whose rows count too.
    await elsewhere((db) => db.deleteFrom('players').where('id', '=', player.id).execute());
    expect((await org.api.get(ctaUrl)).status).toBe(404);
    expect(everything()).toBe(start);
  });

  it("another process's CTA write drops that organization's CTAs alone (on PostgreSQL that CTA alone); a commit that does not say what it changed drops everything", async () => {
    const otherOrg = await createOrg(t);
    const [mine, sibling, theirs] = [await newCta(), await newCta(), await newCta(otherOrg.api)];
    for (const [cta, api] of [
      [mine, org.api],
      [sibling, org.api],
      [theirs, otherOrg.api],
    ] as const)
      await readTwice(`${P}/ctas/${cta.id}`, api);
    await notificationsLanded();
    const cache = readCacheOf(t.database.db)!;
    const everything = () => t.database.clock.generations.ofTable('test_no_such_table');
    const [start, before] = [everything(), cache.stats('event')];
    await elsewhere((db) => db.updateTable('events').set({ html: 'changed elsewhere' }).where('id', '=', mine.id).execute());
    expect((await org.api.get(`${P}/ctas/${mine.id}`)).body.html).toBe('changed elsewhere');
    expect((await org.api.get(`${P}/ctas/${sibling.id}`)).body.html).toBe('before');
    expect((await otherOrg.api.get(`${P}/ctas/${theirs.id}`)).body.html).toBe('before');
    // SQLite's counts tell the organization, PostgreSQL's notifications the row too.
    const siblingMissed = dialect === 'sqlite' ? 1 : 0;
    expect(cache.stats('event')).toMatchObject({ hits: before.hits + 2 - siblingMissed, misses: before.misses + 1 + siblingMissed });
    expect(everything()).toBe(start);
    // PostgreSQL: a trigger function of an earlier release sent the schema's notification alone.
    // SQLite: a table of organizations whose update trigger, of an earlier release, only counts.
    let missed = before.misses + 1 + siblingMissed;
    if (dialect === 'postgres') await elsewhere((db) => sql`select pg_notify('reelbase_changes', current_schema())`.execute(db));
    else {
      await elsewhere(async (db) => {
        await sql`drop trigger reelbase_changes_update_events`.execute(db);
        await sql`create trigger reelbase_changes_update_events after update on events begin update reelbase_changes set changes = changes + 1 where name = 'events'; end`.execute(
          db,
        );
      });
      // The schema's change dropped everything; read again, and then the write.
      expect((await otherOrg.api.get(`${P}/ctas/${theirs.id}`)).body.html).toBe('before');
      missed++;
      await elsewhere((db) => db.updateTable('events').set({ html: 'again elsewhere' }).where('id', '=', mine.id).execute());
    }
    expect((await otherOrg.api.get(`${P}/ctas/${theirs.id}`)).body.html).toBe('before');
    expect(cache.stats('event').misses).toBe(missed + 1);
    if (dialect === 'postgres') expect(everything()).not.toBe(start);
    else await migrateToLatest(other.db); // this release's triggers again
  });

  it("another process's CTA created on a chapter moves the player's cta_meta (the counts its triggers keep)", async () => {
    const player = await createPlayer(org.api);
    const chapter = player.chapters_attributes[0].id;
    expect((await postCta(org.api, chapter, 'one')).status).toBe(201);
    const meta = `${P}/players/${player.id}/cta_meta`;
    expect((await readTwice(meta)).body.num_public_ctas).toBe(1);
    await elsewhere((db) =>
      db
        .insertInto('events')
        .values({
          organization_id: org.organizationId,
          chapter_id: chapter,
          player_id: player.id,
          event_type: 'simple_overlay',
          second: 2,
          html: '<b>two</b>',
          state: 'public',
          created_at: 0,
          updated_at: 0,
        })
        .execute(),
    );
    expect((await org.api.get(meta)).body.num_public_ctas).toBe(2);
  });

  it.runIf(dialect === 'sqlite')(
    "while a table made by hand counts nothing, another connection's commit drops every cached read; the next start's migrations make it count",
    async () => {
      const cta = await newCta();
      const url = `${P}/ctas/${cta.id}`;
      const cache = readCacheOf(t.database.db)!;
      const everything = () => t.database.clock.generations.ofTable('test_no_such_table');
      await elsewhere((db) => sql`create table test_by_hand (id integer primary key)`.execute(db));
      try {
        await readTwice(url);
        let start = everything();
        await elsewhere((db) => sql`insert into test_by_hand (id) values (1)`.execute(db));
        expect((await org.api.get(url)).body.html).toBe('before');
        expect(everything()).toBe(start + 1);
        await migrateToLatest(other.db);
        await readTwice(url);
        await sleep(3);
        await readTwice(url); // the counts read again, under the new schema
        [start] = [everything()];
        const before = cache.stats('event');
        await elsewhere((db) => sql`insert into test_by_hand (id) values (2)`.execute(db));
        expect((await org.api.get(url)).body.html).toBe('before');
        expect(cache.stats('event')).toMatchObject({ hits: before.hits + 1, misses: before.misses });
        expect(everything()).toBe(start);
      } finally {
        await elsewhere((db) => sql`drop table test_by_hand`.execute(db));
      }
    },
  );

  it.runIf(dialect === 'sqlite')(
    "finds a table renamed away from under its counting triggers uncounted, and the next start's migrations count it",
    async () => {
      const sqlite = new BetterSqlite3(path.join(dir, 'reelbase.sqlite'), { readonly: true });
      try {
        await elsewhere((db) => sql`create table test_renamed (id integer primary key)`.execute(db));
        await migrateToLatest(other.db);
        expect(uncountedTables(sqlite)).toEqual([]);
        // Its triggers go with the renamed table, under the names the new one has.
        await elsewhere((db) => sql`alter table test_renamed rename to test_renamed_old`.execute(db));
        await elsewhere((db) => sql`create table test_renamed (id integer primary key)`.execute(db));
        // And the old table, whose triggers count under the new one's name.
        expect(uncountedTables(sqlite)).toEqual(['test_renamed', 'test_renamed_old']);
        await migrateToLatest(other.db);
        expect(uncountedTables(sqlite)).toEqual([]);
        const count = () => sqlite.prepare(`select changes from ${CHANGES_TABLE} where name = 'test_renamed'`).pluck().get() as number;
        const before = count();
        await sql`insert into test_renamed (id) values (1)`.execute(other.db);
        expect(count()).toBe(before + 1);
      } finally {
        await elsewhere((db) => sql`drop table if exists test_renamed`.execute(db));
        await elsewhere((db) => sql`drop table if exists test_renamed_old`.execute(db));
      }
    },
  );

  it.runIf(dialect === 'sqlite')('counts the changes of every table a cached read may read, by triggers made at each start, and none of the others', () => {
    const sqlite = new BetterSqlite3(path.join(dir, 'reelbase.sqlite'), { readonly: true });
    try {
      expect(uncountedTables(sqlite)).toEqual([]);
      const counted = new Set(sqlite.prepare(`select name from ${CHANGES_TABLE}`).pluck().all() as string[]);
      for (const table of ['events', 'players', 'chapters', 'api_tokens', 'users', 'event_counts', 'live_stream_instances']) expect(counted).toContain(table);
      for (const table of UNCACHED_TABLES) expect(counted).not.toContain(table);
      // What the FTS5 tables hold is kept by their tables' triggers: a counted change reaches them.
      expect(t.database.clock.reach.ofTables(['events'])).toEqual(expect.arrayContaining(['events', 'events_search', 'event_counts']));
      // The tables that note organizations: those of organizations the API writes, not the counters' or the notes' own.
      const noting = new Set(
        sqlite
          .prepare(
            `select tbl_name from sqlite_master where type = 'trigger' and name like 'reelbase\\_changes\\_%' escape '\\' and sql like '%insert into ${ORGANIZATION_CHANGES_TABLE} %'`,
          )
          .pluck()
          .all() as string[],
      );
      for (const table of ['events', 'players', 'chapters', 'api_tokens']) expect(noting).toContain(table);
      for (const table of ['event_counts', 'event_pages', 'row_counts', 'row_pages', ORGANIZATION_CHANGES_TABLE, 'organizations'])
        expect(noting).not.toContain(table);
    } finally {
      sqlite.close();
    }
  });

  it("another organization's CTAs created, changed and deleted leave this organization's cached CTA; its own organization's drop it", async () => {
    const cta = await newCta();
    const neighbour = await createOrg(t);
    const theirs = await newCta(neighbour.api);
    await notificationsLanded();
    await readTwice(`${P}/ctas/${cta.id}`);
    await notificationsLanded();
    const cache = readCacheOf(t.database.db)!;
    /** Reads our CTA: whether it was answered from the cache. */
    const cached = async () => {
      const before = cache.stats('event');
      expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
      const after = cache.stats('event');
      expect(after.hits + after.misses).toBe(before.hits + before.misses + 1);
      return after.hits === before.hits + 1;
    };
    await newCta(neighbour.api);
    expect((await neighbour.api.patch(`${P}/ctas/${theirs.id}`, { html: 'theirs' })).status).toBe(200);
    expect((await neighbour.api.delete(`${P}/ctas/${theirs.id}`)).status).toBeLessThan(300);
    // PostgreSQL: the notifications of those commits, per organization, have arrived too.
    await notificationsLanded();
    expect(await cached()).toBe(true);
    // Its own organization's CTAs created, and another of its CTAs changed and deleted: those statements
    // say which of its rows they touched (none that existed, or that one), so the cached CTA stands.
    const mine = await newCta();
    expect((await org.api.patch(`${P}/ctas/${mine.id}`, { html: 'mine' })).status).toBe(200);
    expect((await org.api.delete(`${P}/ctas/${mine.id}`)).status).toBeLessThan(300);
    await notificationsLanded();
    expect(await cached()).toBe(true);
    // A statement over its organization's rows that does not say which: read afresh.
    await t.database.db.updateTable('events').set({ html: 'before' }).where('organization_id', '=', org.organizationId).where('id', '>=', cta.id).execute();
    await notificationsLanded();
    expect(await cached()).toBe(false);
    expect(await cached()).toBe(true);
    // That row itself, by its organization and id: read afresh, and seen.
    await t.database.db.updateTable('events').set({ html: 'changed' }).where('organization_id', '=', org.organizationId).where('id', '=', cta.id).execute();
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('changed');
    await t.database.db.updateTable('events').set({ html: 'before' }).where('organization_id', '=', org.organizationId).where('id', '=', cta.id).execute();
    await notificationsLanded();
    expect(await cached()).toBe(false);
    expect(await cached()).toBe(true);
  });

  it("another organization's users, tokens, players, chapters, CTAs, webhooks and address ranges written leave this organization's cached tokens and the watch page's lookups; its own drop them", async () => {
    const player = await createPlayer(org.api);
    const created = await postCta(org.api, player.chapters_attributes[0].id, 'x');
    expect(created.status).toBe(201);
    const cta = created.body as { id: number };
    const user = await createUser(org.api, { role_id: 2 });
    const asUser = await userClient(t, org.organizationId, user.id, 'admin');
    const neighbour = await createOrg(t);
    const theirs = await createPlayer(neighbour.api);
    const cache = readCacheOf(t.database.db)!;
    const NAMESPACES = ['token', 'watch-player', 'watch-chapter-at', 'watch-event-of', 'ip-ranges-any', 'webhook-subscriptions'] as const;
    const report = async (load: string) => {
      for (const payload of [
        { type: 'view', percent_watched: 0, chapter: 0 },
        { type: 'cta_click', chapter: 0, event_id: cta.id },
      ]) {
        const res = await t.app.inject({
          method: 'POST',
          url: `/watch/${player.uuid}/analytics`,
          headers: { 'user-agent': BROWSER_UA },
          payload: { ...payload, player_load_id: load, visitor_uuid: 'v' },
        });
        expect(res.statusCode).toBe(204);
      }
      expect((await asUser.get(`${P}/players/${player.id}`)).status).toBe(200);
    };
    let loads = 0;
    /** Reads through every namespace once: the namespaces whose read was a miss. */
    const missed = async () => {
      const before = NAMESPACES.map((n) => cache.stats(n).misses);
      await report(`load-${++loads}`);
      return NAMESPACES.filter((n, i) => cache.stats(n).misses !== before[i]);
    };
    await notificationsLanded();
    await report('warm-1');
    await report('warm-2');
    await notificationsLanded();
    expect(await missed()).toEqual([]);

    // The neighbour's writes to every table those reads read.
    const other = await createUser(neighbour.api, { role_id: 2 });
    expect((await neighbour.api.patch(`${P}/users`, { id: other.id, first_name: 'Changed' })).status).toBe(200);
    await neighbour.as('viewer');
    await createPlayer(neighbour.api);
    expect((await neighbour.api.patch(`${P}/players/${theirs.id}`, { player: { name: 'Renamed' } })).status).toBe(200);
    expect((await neighbour.api.patch(`${P}/chapters/${theirs.chapters_attributes[0].id}`, { position: 3 })).status).toBe(200);
    await newCta(neighbour.api);
    expect((await neighbour.api.post(`${P}/blacklisted_ip_ranges`, { name: 'lab', ip_range: '198.51.100.0/24' })).status).toBe(201);
    expect((await neighbour.api.post(`${P}/organizations/${neighbour.organizationId}/webhooks/analytics`, { url: 'https://hooks.example.com/a' })).status).toBe(
      201,
    );
    await notificationsLanded();
    expect(await missed()).toEqual([]);

    // The same writes in this organization drop what they wrote.
    expect((await org.api.patch(`${P}/users`, { id: user.id, first_name: 'Changed' })).status).toBe(200);
    await notificationsLanded();
    expect(await missed()).toEqual(['token']);
    expect((await org.api.patch(`${P}/chapters/${player.chapters_attributes[0].id}`, { position: 0 })).status).toBe(200);
    await notificationsLanded();
    // Its player's updated_at too.
    expect(await missed()).toEqual(['watch-player', 'watch-chapter-at']);
    expect((await org.api.patch(`${P}/ctas/${cta.id}`, { html: 'again' })).status).toBe(200);
    await notificationsLanded();
    expect(await missed()).toEqual(['watch-event-of']);
    expect((await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'lab', ip_range: '203.0.113.0/24' })).status).toBe(201);
    await notificationsLanded();
    expect(await missed()).toEqual(['ip-ranges-any']);
    expect((await org.api.patch(`${P}/players/${player.id}`, { player: { name: 'Renamed' } })).status).toBe(200);
    await notificationsLanded();
    expect(await missed()).toEqual(expect.arrayContaining(['watch-player']));
  });

  it("answers a player by id from the cache through CTA writes and other organizations' writes, and afresh once its row, a chapter or a chapter's video changed", async () => {
    const player = await createPlayer(org.api, {}, 2);
    const url = `${P}/players/${player.id}`;
    const neighbour = await createOrg(t);
    const theirs = await createPlayer(neighbour.api);
    const theirVideo = theirs.chapters_attributes[0].video_attributes.id;
    const cache = readCacheOf(t.database.db)!;
    /** Reads the player: whether it was answered from the cache, and the body. */
    const read = async () => {
      const before = cache.stats('player').hits;
      const res = await org.api.get(url);
      expect(res.status).toBe(200);
      return { cached: cache.stats('player').hits === before + 1, body: res.body };
    };
    // PostgreSQL: a read while the set-up's notifications are on their way is not kept.
    await notificationsLanded();
    await read();
    expect((await read()).cached).toBe(true);
    expect((await stranger()).status).toBe(404);
    await postCta(org.api, player.chapters_attributes[0].id, 'x');
    expect((await neighbour.api.patch(`${P}/players/${theirs.id}`, { player: { name: 'Theirs renamed' } })).status).toBe(200);
    expect((await neighbour.api.patch(`${P}/videos/${theirVideo}`, { name: 'Their video renamed' })).status).toBe(200);
    await notificationsLanded();
    expect((await read()).cached).toBe(true);

    const video = player.chapters_attributes[1].video_attributes.id;
    for (const [write, check] of [
      [() => org.api.patch(url, { player: { name: 'Renamed' } }), (body: any) => expect(body.name).toBe('Renamed')],
      [
        () => org.api.patch(`${P}/chapters/${player.chapters_attributes[1].id}`, { position: 0 }),
        (body: any) => expect(body.chapters_attributes[0].video_attributes.id).toBe(video),
      ],
      [
        () => org.api.patch(`${P}/videos/${video}`, { name: 'Video renamed' }),
        (body: any) => expect(body.chapters_attributes[0].video_attributes.name).toBe('Video renamed'),
      ],
      // A chapter written without its player's row (the API's chapter writes touch the player too).
      [
        async () => (
          await t.database.db
            .updateTable('chapters')
            .set({ updated_at: 1 })
            .where('organization_id', '=', org.organizationId)
            .where('id', '=', player.chapters_attributes[0].id)
            .execute(),
          { status: 200 }
        ),
        (body: any) => expect(body.chapters_attributes[1].updated_at).toBe(1),
      ],
    ] as const) {
      expect((await write()).status).toBe(200);
      await notificationsLanded();
      const fresh = await read();
      expect(fresh.cached).toBe(false);
      check(fresh.body);
      expect(await read()).toEqual({ cached: true, body: fresh.body });
    }

    // Another organization asking for the same id is answered like a missing one, cached or not.
    async function stranger() {
      return neighbour.api.get(url);
    }
    expect((await stranger()).status).toBe(404);
  });

  it("lists players from the cache a GET keeps them in, reads only the missing ones, and answers a chapter's video renamed afresh", async () => {
    const own = await createOrg(t);
    const neighbour = await createOrg(t);
    const players = [await createPlayer(own.api, {}, 2), await createPlayer(own.api), await createPlayer(own.api)];
    const cache = readCacheOf(t.database.db)!;
    const list = async () => {
      const before = cache.stats('player');
      const res = await own.api.get(`${P}/players?per_page=20`);
      expect(res.status).toBe(200);
      const after = cache.stats('player');
      return { hits: after.hits - before.hits, misses: after.misses - before.misses, body: res.body };
    };
    const idsOf = (body: any) => body.players.map((p: { id: number }) => p.id).sort((a: number, b: number) => a - b);
    await notificationsLanded();
    // One kept by a GET of its own; the other two read together by the list, and kept.
    expect((await own.api.get(`${P}/players/${players[1].id}`)).status).toBe(200);
    const first = await list();
    expect(first).toMatchObject({ hits: 1, misses: 2 });
    expect(idsOf(first.body)).toEqual(players.map((p) => p.id).sort((a, b) => a - b));
    const second = await list();
    expect(second).toMatchObject({ hits: 3, misses: 0 });
    expect(second.body).toEqual(first.body);
    // What the list keeps, a GET answers.
    const before = cache.stats('player').hits;
    expect((await own.api.get(`${P}/players/${players[0].id}`)).body.chapters_attributes).toHaveLength(2);
    expect(cache.stats('player').hits).toBe(before + 1);

    // A neighbour's player and a CTA of our own leave them; our own chapter's video renamed does not.
    expect((await neighbour.api.patch(`${P}/players/${(await createPlayer(neighbour.api)).id}`, { player: { name: 'Theirs' } })).status).toBe(200);
    await postCta(own.api, players[2].chapters_attributes[0].id, 'x');
    await notificationsLanded();
    expect(await list()).toMatchObject({ hits: 3, misses: 0 });
    const video = players[0].chapters_attributes[1].video_attributes.id;
    expect((await own.api.patch(`${P}/videos/${video}`, { name: 'Renamed in the list' })).status).toBe(200);
    await notificationsLanded();
    const fresh = await list();
    expect(fresh).toMatchObject({ hits: 0, misses: 3 });
    const renamed = fresh.body.players.find((p: { id: number }) => p.id === players[0].id);
    expect(renamed.chapters_attributes.map((c: any) => c.video_attributes.name)).toContain('Renamed in the list');
    // A player deleted: gone from the list and from its count.
    expect((await own.api.delete(`${P}/players/${players[1].id}`)).status).toBe(200);
    await notificationsLanded();
    const after = await list();
    expect(idsOf(after.body)).toEqual([players[0].id, players[2].id].sort((a, b) => a - b));
  });

  it("looks a CTA's chapter up from the cache through CTA writes and other organizations' chapters, and sees its own chapter deleted", async () => {
    const player = await createPlayer(org.api, {}, 2);
    const chapter = player.chapters_attributes[1].id;
    const neighbour = await createOrg(t);
    const theirs = await createPlayer(neighbour.api, {}, 2);
    const cache = readCacheOf(t.database.db)!;
    const hits = () => cache.stats('chapter-owner').hits;
    const post = () => postCta(org.api, chapter, 'x');
    await notificationsLanded();
    expect((await org.api.get(`${P}/chapters/${chapter}/ctas`)).status).toBe(200);
    const before = hits();
    expect((await post()).status).toBe(201);
    expect((await neighbour.api.patch(`${P}/chapters/${theirs.chapters_attributes[1].id}`, { position: 0 })).status).toBe(200);
    await notificationsLanded();
    expect((await org.api.get(`${P}/chapters/${chapter}/ctas`)).body.ctas).toHaveLength(1);
    expect(hits()).toBe(before + 2);
    // Its own chapter written without the player's row: the next lookup is a fresh one.
    await t.database.db.updateTable('chapters').set({ updated_at: 1 }).where('organization_id', '=', org.organizationId).where('id', '=', chapter).execute();
    const misses = cache.stats('chapter-owner').misses;
    expect((await post()).status).toBe(201);
    expect(cache.stats('chapter-owner').misses).toBe(misses + 1);
    expect((await org.api.delete(`${P}/chapters/${chapter}`)).status).toBe(200);
    expect((await post()).status).toBe(404);
    expect((await org.api.get(`${P}/chapters/${chapter}/ctas`)).status).toBe(404);
  });

  it("counts a list's rows from the cache through CTA writes, and exactly once a row of a counted table was added or removed", async () => {
    const fresh = await createOrg(t);
    const cache = readCacheOf(t.database.db)!;
    const count = async () => {
      const before = cache.stats('row-count').hits;
      const res = await fresh.api.get(`${P}/players?per_page=1`);
      expect(res.status).toBe(200);
      return { n: res.body.summary.count, cached: cache.stats('row-count').hits === before + 1 };
    };
    const player = await createPlayer(fresh.api);
    await notificationsLanded();
    expect(await count()).toEqual({ n: 1, cached: false });
    await postCta(fresh.api, player.chapters_attributes[0].id, 'x');
    await notificationsLanded();
    expect(await count()).toEqual({ n: 1, cached: true });
    await createPlayer(fresh.api);
    expect(await count()).toMatchObject({ n: 2, cached: false });
    expect((await fresh.api.delete(`${P}/players/${player.id}`)).status).toBe(200);
    expect(await count()).toMatchObject({ n: 1, cached: false });
  });

  it("finds a player's CTA list and cta_meta player from the cache through CTA writes, by id and by UUID, and never one for another", async () => {
    const player = await createPlayer(org.api);
    const other = await createPlayer(org.api);
    const cache = readCacheOf(t.database.db)!;
    const hits = () => cache.stats('player-ref-by-id').hits + cache.stats('player-ref-by-uuid').hits;
    await notificationsLanded();
    for (const query of [`/players/${player.id}/cta_meta`, `/players/${player.id}/ctas`, `/players/uuid=${player.uuid}/cta_meta`]) {
      expect((await org.api.get(`${P}${query}`)).status).toBe(200);
    }
    await postCta(org.api, player.chapters_attributes[0].id, 'x');
    await notificationsLanded();
    const before = hits();
    expect((await org.api.get(`${P}/players/${player.id}/cta_meta`)).status).toBe(200);
    expect((await org.api.get(`${P}/players/uuid=${player.uuid}/cta_meta`)).status).toBe(200);
    expect(hits()).toBe(before + 2);
    // Another player's id given as a UUID finds nothing, though that id's lookup is cached.
    expect((await org.api.get(`${P}/players/${other.id}/cta_meta`)).status).toBe(200);
    expect((await org.api.get(`${P}/players/uuid=${other.id}/cta_meta`)).status).toBe(404);
    expect((await org.api.delete(`${P}/players/${player.id}`)).status).toBe(200);
    expect((await org.api.get(`${P}/players/${player.id}/cta_meta`)).status).toBe(404);
  });

  it("a player deleted takes its CTAs out of the cache, through the foreign keys' cascade and the counting triggers", async () => {
    const player = await createPlayer(org.api);
    const res = await postCta(org.api, player.chapters_attributes[0].id, 'x');
    await readTwice(`${P}/ctas/${res.body.id}`);
    expect(t.database.clock.reach.of('delete from "players" where "id" = ?').tables).toEqual(
      expect.arrayContaining(['players', 'chapters', 'events', 'event_counts']),
    );
    // Deleting the player row alone, in this process: only the cascade removes the CTA.
    await t.database.db.deleteFrom('players').where('id', '=', player.id).execute();
    expect((await org.api.get(`${P}/ctas/${res.body.id}`)).status).toBe(404);
  });

  it("reads what each write reaches from the schema: cascades, counting triggers, and no table's reach from an uncached one", async () => {
    const reach = await readReach(t.database.db);
    const of = (n: string) => [...(reach.get(n) ?? [])];
    expect(reach.get('players update')).toBeUndefined();
    expect(of('players delete')).toEqual(expect.arrayContaining(['chapters', 'events', 'event_counts', 'player_tags']));
    expect(of('chapters delete')).toEqual(expect.arrayContaining(['events', 'event_counts']));
    expect(of('events insert')).toContain('event_counts');
    expect(of('live_streams delete')).toContain('live_stream_instances');
    // Writes to the uncached tables move no clock (src/db/uncached-tables.ts): what they reach must be uncached too.
    for (const table of UNCACHED_TABLES) {
      for (const op of ['insert', 'update', 'delete']) {
        expect(
          reach.get(`${table} ${op}`) === null ? ['anything'] : of(`${table} ${op}`).filter((x) => !(UNCACHED_TABLES as readonly string[]).includes(x)),
        ).toEqual([]);
      }
    }
  });

  it("sees what its own write set off through a trigger another connection's migration added since the schema was read", async () => {
    const player = await createPlayer(org.api);
    const url = `${P}/players/${player.id}`;
    const name = async () => (await org.api.get(url)).body.name as string;
    await notificationsLanded();
    await readTwice(url);
    // Another process's migration: a CTA added now renames its player. (A DDL moves PostgreSQL's clock
    // through no notification: nothing to wait for there.)
    const migration = (statement: ReturnType<typeof sql>) => (dialect === 'sqlite' ? elsewhere((db) => statement.execute(db)) : statement.execute(other.db));
    await migration(
      dialect === 'sqlite'
        ? sql`create trigger test_touch_player after insert on events begin update players set name = 'Touched' where id = new.player_id; end`
        : sql`create function test_touch_player() returns trigger language plpgsql as $$ begin update players set name = 'Touched' where id = new.player_id; return null; end $$;
              create trigger test_touch_player after insert on events for each row execute function test_touch_player()`,
    );
    try {
      await readTwice(url);
      expect(await name()).not.toBe('Touched');
      expect((await postCta(org.api, player.chapters_attributes[0].id, 'x')).status).toBe(201);
      // SQLite: on the very next request (the schema's version moved, so that write's reach was unknown).
      // PostgreSQL: once the notifications of our own commit, which tell the players' row, have landed.
      if (dialect === 'postgres') await notificationsLanded();
      expect(await name()).toBe('Touched');
      if (dialect === 'sqlite') {
        // And the schema read again: an insert of a CTA now reaches the players.
        for (const deadline = Date.now() + 2_000; !t.database.clock.reach.learned; await sleep(2)) {
          if (Date.now() > deadline) throw new Error('the schema was not read again within 2 s');
        }
        expect(t.database.clock.reach.of('insert into "events" ("organization_id") values (?)').tables).toContain('players');
      }
    } finally {
      await migration(
        dialect === 'sqlite' ? sql`drop trigger test_touch_player` : sql`drop trigger test_touch_player on events; drop function test_touch_player()`,
      );
    }
  });

  it('does not serve a read made inside a transaction that rolled back', async () => {
    const cta = await newCta();
    await readTwice(`${P}/ctas/${cta.id}`);
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('events').set({ html: 'rolled back' }).where('id', '=', cta.id).execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
  });
});

/**
 * PostgreSQL's change clock: triggers on every table notify, a LISTENing connection per process hears
 * it (src/db/pg-change-triggers.ts, src/db/pg-connection.ts).
 */
describe.runIf(dialects.includes('postgres'))('change notifications on postgres', () => {
  let t: TestApp;
  let other: Database;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp('postgres');
    other = t.openAnother();
    org = await createOrg(t);
  });

  afterAll(async () => {
    await other.destroy();
    await t.close();
  });

  async function until(what: string, ok: () => boolean) {
    for (const deadline = Date.now() + 5_000; !ok(); await sleep(2)) {
      if (Date.now() > deadline) throw new Error(`not ${what} within 5 s`);
    }
  }

  /** Waits until the clock has stood still for 50 ms: every notification of earlier writes has landed. */
  async function settled() {
    for (const deadline = Date.now() + 5_000; ;) {
      const at = t.database.clock.now();
      await sleep(50);
      if (t.database.clock.now() === at) return;
      if (Date.now() > deadline) throw new Error('the clock kept moving for 5 s');
    }
  }

  it('gives every table the change triggers', async () => {
    expect(await uncoveredTables(t.database.db)).toEqual([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
      where s.nspname = current_schema() and c.relkind = 'r' and c.relname not like 'kysely\\_%'`.execute(t.database.db);
    expect(rows[0].n).toBeGreaterThan(20);
  });

  it('covers a table added after the migrations, on the next start', async () => {
    await sql`create table later_area (id serial primary key, name text)`.execute(t.database.db);
    expect(await uncoveredTables(t.database.db)).toEqual(['later_area']);
    await migrateToLatest(t.database.db);
    expect(await uncoveredTables(t.database.db)).toEqual([]);
    const before = t.database.clock.now();
    await sql`insert into later_area (name) values ('x')`.execute(other.db);
    await until('notified', () => t.database.clock.now() !== before);
    await sql`drop table later_area`.execute(t.database.db);
  });

  it('answers repeated reads from memory until a notification says otherwise', async () => {
    const player = await createPlayer(org.api);
    const cta = (await postCta(org.api, player.chapters_attributes[0].id, 'cached')).body;
    await until('listening', () => t.database.clock.now() !== null);
    // The notifications of our own writes above land first: each one empties the cache.
    await settled();
    await org.api.get(`${P}/ctas/${cta.id}`);
    // A change with the triggers switched off for this session: nothing notifies, so the cached row is answered.
    await other.db.connection().execute(async (c) => {
      await sql`set session_replication_role = replica`.execute(c);
      await c.updateTable('events').set({ html: 'unannounced' }).where('id', '=', cta.id).execute();
      await sql`reset session_replication_role`.execute(c);
    });
    await sleep(20);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('cached');
    const before = t.database.clock.now();
    await other.db.updateTable('events').set({ html: 'announced' }).where('id', '=', cta.id).execute();
    await until('notified', () => t.database.clock.now() !== before);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('announced');
  });

  it("tells, per organization, a row added, or which row changed for a transaction's first 8 rows", async () => {
    const { schema } = (await sql<{ schema: string }>`select current_schema() as schema`.execute(t.database.db)).rows[0];
    const listener = new (pgDriver().Client)({ connectionString: process.env.TEST_DATABASE_URL });
    await listener.connect();
    const heard: string[] = [];
    const prefix = `${schema} events `;
    listener.on('notification', (n) => {
      if (n.channel === ORGANIZATION_CHANNEL && n.payload?.startsWith(prefix)) heard.push(n.payload.slice(prefix.length));
    });
    await listener.query(`listen ${ORGANIZATION_CHANNEL}`);
    const o = org.organizationId;
    try {
      const player = await createPlayer(org.api);
      const chapter = player.chapters_attributes[0].id;
      const ids: number[] = [];
      for (let i = 0; i < 10; i++) ids.push((await postCta(org.api, chapter, `n${i}`)).body.id);
      await until('ten inserts heard', () => heard.length >= 10);
      expect(heard).toEqual(ids.map(() => `${o} insert`));
      heard.length = 0;
      expect((await org.api.patch(`${P}/ctas/${ids[3]}`, { html: 'one' })).status).toBe(200);
      await until('the update heard', () => heard.length >= 1);
      expect(heard).toEqual([`${o} row ${ids[3]}`]);
      heard.length = 0;
      // One statement over the ten: eight rows told, the other two by their organization (folded into one).
      await t.database.db.updateTable('events').set({ html: 'all' }).where('organization_id', '=', o).where('chapter_id', '=', chapter).execute();
      await until('the ten rows heard', () => heard.length >= 9);
      await sleep(50);
      expect(heard).toHaveLength(9);
      expect(heard.filter((p) => p === `${o}`)).toHaveLength(1);
      const told = heard.filter((p) => p !== `${o}`).map((p) => Number(/^\d+ row (\d+)$/.exec(p)?.[1]));
      expect(new Set(told).size).toBe(8);
      for (const id of told) expect(ids).toContain(id);
    } finally {
      await listener.end();
    }
  });

  it("catches, by its own commits' notifications per table, a change its reach did not know", async () => {
    await until('listening', () => t.database.clock.now() !== null);
    const player = await createPlayer(org.api);
    const cta = (await postCta(org.api, player.chapters_attributes[0].id, 'x')).body;
    await settled();
    await org.api.get(`${P}/ctas/${cta.id}`);
    const hits = readCacheOf(t.database.db)!.stats('event').hits;
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).status).toBe(200);
    expect(readCacheOf(t.database.db)!.stats('event').hits).toBe(hits + 1);
    // As if a foreign key had been added by another process's migration: the reach knows no cascade.
    t.database.clock.reach.learn(new Map());
    try {
      await t.database.db.deleteFrom('players').where('id', '=', player.id).execute();
      const deadline = Date.now() + 2_000;
      while ((await org.api.get(`${P}/ctas/${cta.id}`)).status !== 404) {
        if (Date.now() > deadline) throw new Error('the deleted CTA was still answered from the cache after 2 s');
        await sleep(5);
      }
    } finally {
      t.database.clock.reach.learn(await readReach(t.database.db));
    }
  });

  it('drops a row read while a write to it waited for its commit, at the commit', async () => {
    await until('listening', () => t.database.clock.now() !== null);
    const player = await createPlayer(org.api);
    const cta = (await postCta(org.api, player.chapters_attributes[0].id, 'old')).body;
    await org.api.get(`${P}/ctas/${cta.id}`);
    await t.database.db.transaction().execute(async (trx) => {
      await trx.updateTable('events').set({ html: 'committed' }).where('id', '=', cta.id).execute();
      // Another request meanwhile reads, over another connection, the row as it stands before the commit.
      expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('old');
    });
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('committed');
  });

  it('a transaction that only read moves nothing', async () => {
    await until('listening', () => t.database.clock.now() !== null);
    await settled(); // notifications of the earlier tests' writes land first
    const before = t.database.clock.now();
    await t.database.db.transaction().execute((trx) => trx.selectFrom('events').select('id').execute());
    await t.database.db.transaction().execute((trx) => trx.updateTable('events').set({ html: 'x' }).where('id', '=', -1).execute());
    expect(t.database.clock.now()).toBe(before);
  });

  it('caches nothing while the listening connection is down, and listens again', async () => {
    await until('listening', () => t.database.clock.now() !== null);
    const player = await createPlayer(org.api);
    const cta = (await postCta(org.api, player.chapters_attributes[0].id, 'one')).body;
    await org.api.get(`${P}/ctas/${cta.id}`);
    const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.database.db)).rows[0].s;
    // Listeners name their schema (tests give each file one); this one's and the second connection's.
    const killed = await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = ${`reelbase changes ${schema}`}`.execute(other.db);
    expect(killed.rows.length).toBe(2);
    await until('down', () => t.database.clock.now() === null);
    // Unannounced changes are seen while nothing is cached.
    await other.db.connection().execute(async (c) => {
      await sql`set session_replication_role = replica`.execute(c);
      await c.updateTable('events').set({ html: 'two' }).where('id', '=', cta.id).execute();
      await sql`reset session_replication_role`.execute(c);
    });
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('two');
    await until('listening again', () => t.database.clock.now() !== null);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('two');
  });
});
