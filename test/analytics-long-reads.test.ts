/**
 * Reports off the event loop (docs/analytics.md, "Reporting off the event loop"): on SQLite in a file,
 * the server's case, the reporting operations read the stored reports on a thread of their own with a
 * read-only connection, so that a popular player's report does not hold every other request. In
 * memory they read where they are asked for (test/analytics.test.ts covers them). On PostgreSQL,
 * whose queries never hold the event loop, they read on connections of their own, so that however
 * many a dashboard asks for at once, the requests of everyone else still find a connection.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeStaleTables } from '../src/db/sqlite-statistics.ts';
import { SqliteReadThread } from '../src/db/sqlite-read-thread.ts';
import { BROWSER_UA, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const P = '/dashboard/v1/analytics';
/** Loads seeded by SQL: each a load, a start, a completion, ten seconds watched; every tenth an address. */
const LOADS = 42_000;

describe('reports of a SQLite file, read off the event loop', () => {
  let t: TestApp;
  let dir: string;
  let org: OrgContext;
  let player: { id: number; uuid: string; chapters_attributes: Array<{ video_id: number }> };
  const threads = () => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-long-reads-'));
    t = await createTestApp('sqlite', {}, { sqlitePath: path.join(dir, 'reelbase.sqlite') });
    org = await createOrg(t);
    player = await createPlayer(org.api);
    const video = player.chapters_attributes[0].video_id;
    const now = Date.now();
    // LOADS loads of 4 or 5 reports, an hour apart at most, over the last day; 100 visitors.
    await sql`insert into analytics_events (organization_id, player_id, video_id, chapter, type, percent, watched_seconds, watched, email,
                                            visitor_id, session_id, device, browser, country, dedup_key, created_at)
      with recursive n(i) as (select 0 union all select i + 1 from n where i < ${LOADS * 5 - 1})
      select ${org.organizationId}, ${player.id}, ${video}, 0,
             case i % 5 when 0 then 'load' when 1 then 'view' when 2 then 'view' when 3 then 'attention_span' else 'identified_view' end,
             case i % 5 when 1 then 0 when 2 then 100 end,
             case when i % 5 = 3 then 10 end,
             case when i % 5 = 3 then '[[0,10]]' end,
             case when i % 5 = 4 then 'viewer' || ((i / 5) % 7) || '@example.com' end,
             'visitor-' || ((i / 5) % 100), 'load-' || (i / 5), 'desktop', 'Chrome', 'DE', 'seed-' || i,
             ${now} - 3600000 - (i / 5) % 3600000
      from n where i % 5 <> 4 or (i / 5) % 10 = 0`.execute(t.database.db);
    // What ingest writes beside each identified view: the address, last given then, in the organization and at the player.
    await sql`insert into analytics_identified (organization_id, email, last_seen)
      select organization_id, email, max(created_at) from analytics_events where type = 'identified_view' group by organization_id, email`.execute(
      t.database.db,
    );
    await sql`insert into analytics_identified_players (organization_id, player_id, email, last_seen)
      select organization_id, player_id, email, max(created_at) from analytics_events where type = 'identified_view'
      group by organization_id, player_id, email`.execute(t.database.db);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A request, and how busy the event loop was while it was answered. */
  const timed = async (url: string) => {
    const loop = performance.eventLoopUtilization();
    const res = await org.api.get(url);
    return { res, held: performance.eventLoopUtilization(loop).utilization };
  };

  it('answers a player figures from every report without holding the event loop', async () => {
    const before = threads();
    // The thread starts at the first report (a period without any), on the event loop.
    expect((await org.api.get(`${P}/players/${player.id}?from=2001-01-01&to=2001-01-02`)).body).toMatchObject({ loads: 0 });
    expect(threads()).toBeGreaterThan(before);
    const { res, held } = await timed(`${P}/players/${player.id}`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({
      loads: LOADS,
      plays: LOADS,
      views: LOADS,
      completion_rate: 1,
      unique_viewers: 100,
      total_watch_seconds: LOADS * 10,
      identified_viewers: 7,
    });
    // On the event loop, the query over 189,000 reports held it all the time (1.0); here the loop only
    // answers the request (a few per cent on a quiet machine; the bound leaves room for a busy one).
    expect(held).toBeLessThan(0.5);
  });

  it("the housekeeping sweep gathers SQLite's planner statistics, in bounded time", async () => {
    const stats = () =>
      sql<{ idx: string }>`select idx from sqlite_stat1 where tbl = 'analytics_events'`.execute(t.database.db).then(
        (r) => r.rows.map((row) => row.idx),
        () => [],
      );
    expect(await stats()).toEqual([]);
    const started = performance.now();
    await t.services.housekeeping.sweep();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await stats()).toEqual(expect.arrayContaining(['analytics_events_session_idx', 'analytics_events_player_idx']));
  });

  // Without the statistics, SQLite joined an address's loads to the player's 189,000 reports the wrong
  // way round (minutes: this test timed out).
  it('every report operation reads there, with the same answers', async () => {
    const series = await timed(`${P}/players/${player.id}/timeseries?interval=day`);
    expect(series.res.status, series.res.raw).toBe(200);
    const rows = series.res.body.rows as Array<{ views: number }>;
    expect(rows.reduce((sum, r) => sum + r.views, 0)).toBe(LOADS);
    expect(series.held).toBeLessThan(0.5);

    const breakdown = await timed(`${P}/players/${player.id}/breakdown?by=country`);
    expect(breakdown.res.body.rows).toEqual([{ value: 'DE', views: LOADS, unique_viewers: 100 }]);

    const retention = await timed(`${P}/videos/${player.chapters_attributes[0].video_id}/retention`);
    expect(retention.res.status, retention.res.raw).toBe(200);
    expect(retention.res.body).toMatchObject({ duration: 10, views: LOADS, drop_offs: [] });
    expect(new Set(retention.res.body.points.map((p: { share: number }) => p.share))).toEqual(new Set([1]));

    const viewers = await timed(`${P}/players/${player.id}/viewers?per_page=3`);
    expect(viewers.res.body.summary).toMatchObject({ count: 7 });
    expect(viewers.res.body.viewers).toHaveLength(3);
    expect(viewers.res.body.viewers[0]).toMatchObject({ loads: LOADS / 70, total_watch_seconds: (LOADS / 70) * 10 });

    await t.services.analyticsRollups.catchUp();
    const summary = await timed(`${P}/summary`);
    expect(summary.res.body).toMatchObject({ loads: LOADS, plays: LOADS, unique_viewers: 100, identified_viewers: 7 });
  });

  it('sees a report as soon as it is acknowledged', async () => {
    const before = (await org.api.get(`${P}/players/${player.id}`)).body;
    const beacon = await t.app.inject({
      method: 'POST',
      url: `/watch/${player.uuid}/analytics`,
      headers: { 'user-agent': BROWSER_UA },
      payload: { player_load_id: 'fresh', visitor_uuid: 'fresh-visitor', chapter: 0, type: 'view', percent_watched: 0 },
    });
    expect(beacon.statusCode, beacon.body).toBe(204);
    const after = (await org.api.get(`${P}/players/${player.id}`)).body;
    expect(after).toMatchObject({ plays: before.plays + 1, views: before.views + 1, unique_viewers: 101 });
  });

  it('another organization reads none of them', async () => {
    const other = await createOrg(t);
    expect((await other.api.get(`${P}/players/${player.id}`)).status).toBe(404);
    expect((await other.api.get(`${P}/summary`)).body).toMatchObject({ loads: 0, plays: 0 });
  });

  it('a thread that cannot open the file leaves its reads to the server connection', async () => {
    // A directory where the database file should be: the thread's connection cannot open it.
    const thread = new SqliteReadThread(dir, t.database.db);
    const read = () => thread.db.selectFrom('players').select('id').where('id', '=', player.id).execute();
    expect(await read()).toEqual([{ id: player.id }]);
    expect(thread.threaded).toBe(false);
    expect(await read()).toEqual([{ id: player.id }]);
    await thread.close();
  });

  it('refuses to write, and a failed read is an error of that read only', async () => {
    const thread = new SqliteReadThread(path.join(dir, 'reelbase.sqlite'), t.database.db);
    await expect(thread.db.deleteFrom('players').where('id', '=', player.id).execute()).rejects.toThrow(/reads only/);
    await expect(thread.db.deleteFrom('players').where('id', '=', player.id).returning('id').execute()).rejects.toThrow(/readonly/);
    await expect(sql`select * from no_such_table`.execute(thread.db)).rejects.toThrow(/no such table/);
    expect(await thread.db.selectFrom('players').select('id').where('id', '=', player.id).execute()).toEqual([{ id: player.id }]);
    expect(thread.threaded).toBe(true);
    await thread.close();
  });

  it('plans with the statistics gathered after it opened its connection, once told', async () => {
    // Its own file: a fresh install's first sweep finds the table empty, a later one analyzes it grown.
    const file = path.join(dir, 'statistics.sqlite');
    const raw = new Database(file);
    raw.pragma('journal_mode = WAL');
    raw.exec('create table ev (id integer primary key, player int, email text); create index ev_p on ev (player); create index ev_e on ev (email)');
    const main = new Kysely<Record<string, never>>({ dialect: new SqliteDialect({ database: raw }) });
    await analyzeStaleTables(main);
    const thread = new SqliteReadThread(file, t.database.db);
    const plan = async (db: Kysely<Record<string, never>>) =>
      (await sql<{ detail: string }>`explain query plan select * from ev where player = ${3} and email = ${'e3'}`.execute(db)).rows.map((r) => r.detail).join();
    try {
      expect(await plan(thread.db as unknown as Kysely<Record<string, never>>)).toMatch(/ev_p|ev_e/);
      raw.exec(`insert into ev (player, email) with recursive n(i) as (select 0 union all select i + 1 from n where i < 49999)
                select case when i < 45000 then 3 else i end, 'e' || i from n`);
      await analyzeStaleTables(main);
      // One player has nearly every row: the address's index is the one to use, as the statistics say.
      expect(await plan(main)).toContain('ev_e');
      thread.statisticsChanged();
      expect(await plan(thread.db as unknown as Kysely<Record<string, never>>)).toContain('ev_e');
    } finally {
      await thread.close();
      await main.destroy();
    }
  });

  it('closes with the database: the thread ends', async () => {
    const before = threads();
    await t.close();
    for (const deadline = Date.now() + 2_000; threads() >= before && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect(threads()).toBeLessThan(before);
  });
});

if (dialects.includes('postgres')) {
  describe('reports on PostgreSQL, on connections of their own', () => {
    let t: TestApp;
    let org: OrgContext;

    beforeAll(async () => {
      t = await createTestApp('postgres');
      org = await createOrg(t);
    });
    afterAll(() => t.close());

    it('reports waiting by the dozen leave the pool to every other request', async () => {
      const player = await createPlayer(org.api);
      // The reports wait on a lock held meanwhile (as they would behind a long scan): more of them
      // than the pool has connections (5 in tests).
      let reports: Array<Promise<{ status: number }>> = [];
      let probe = 0;
      await t.database.db.transaction().execute(async (trx) => {
        await sql`lock table analytics_events in access exclusive mode`.execute(trx);
        reports = Array.from({ length: 8 }, () => org.api.get(`${P}/players/${player.id}`));
        await new Promise((resolve) => setTimeout(resolve, 300));
        const started = performance.now();
        const tag = org.api.post('/dashboard/v1/tags', { name: 'while reports wait' });
        // Before, the reports took every connection of the pool, and the write waited for one (for ever: the lock is released after it).
        const answered = await Promise.race([tag, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3_000))]);
        probe = performance.now() - started;
        expect(answered?.status, answered?.raw).toBe(201);
      });
      expect(probe).toBeLessThan(2_000);
      expect((await Promise.all(reports)).map((r) => r.status)).toEqual(Array(8).fill(200));
    });

    it('a connection PostgreSQL ends while idle is replaced, in the pool and among the reports', async () => {
      const player = await createPlayer(org.api);
      expect((await org.api.get(`${P}/players/${player.id}`)).status).toBe(200);
      const { rows } = await sql<{ schema: string; pid: number }>`select current_schema() as schema, pg_backend_pid() as pid`.execute(t.database.db);
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      try {
        const ended = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where pid = $1 or application_name = $2`, [
          rows[0].pid,
          `reelbase reports ${rows[0].schema}`,
        ]);
        expect(ended.rowCount).toBeGreaterThanOrEqual(2);
      } finally {
        await admin.end();
      }
      // Before, the pool's 'error' had no listener, and Node ended the process (this test file).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await org.api.get(`/dashboard/v1/players/${player.id}`)).status).toBe(200);
      expect((await org.api.get(`${P}/players/${player.id}`)).status).toBe(200);
    });
  });
}
