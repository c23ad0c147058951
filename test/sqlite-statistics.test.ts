/**
 * SQLite's planner statistics, gathered by the housekeeping sweep off the event loop
 * (src/db/sqlite-statistics.ts): a thread with a connection of its own runs SQLite's own ANALYZE one
 * index at a time, and the server's connection then reads them again. Checked against a full ANALYZE
 * of the same file (the peer), beside the server's own writes, and at close.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.ts';
import { SqliteReadThread } from '../src/db/sqlite-read-thread.ts';
import { SqlitePlannerStatistics, tablesToAnalyze } from '../src/db/sqlite-statistics.ts';
import { BROWSER_UA, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, type TestApp } from './helpers/harness.ts';

/** Reports seeded by SQL on one player: enough that analyzing their indexes takes a while. */
const REPORTS = 150_000;

let seeded = 0;

async function seedReports(t: TestApp, org: OrgContext, player: { id: number; chapters_attributes: Array<{ video_id: number }> }, n = REPORTS) {
  const batch = `${++seeded}-`;
  await sql`insert into analytics_events (organization_id, player_id, video_id, chapter, type, percent, email, visitor_id, session_id,
                                          device, browser, dedup_key, created_at)
    with recursive n(i) as (select 0 union all select i + 1 from n where i < ${n - 1})
    select ${org.organizationId}, ${player.id}, ${player.chapters_attributes[0].video_id}, 0,
           case i % 3 when 0 then 'load' when 1 then 'view' else 'identified_view' end, case when i % 3 = 1 then 0 end,
           case when i % 3 = 2 then 'viewer' || (i % 500) || '@example.com' end,
           'visitor-' || (i % 2000), ${batch} || (i / 3), 'desktop', 'Chrome', ${batch} || i, ${Date.now()} - i * 1000
    from n`.execute(t.database.db);
}

/** Every statistic of the file, in a stable order. */
function statisticsOf(file: string) {
  const raw = new Database(file, { readonly: true });
  try {
    return {
      stat1: raw.prepare('select tbl, idx, stat from sqlite_stat1 order by tbl, idx').all(),
      stat4: raw.prepare('select tbl, idx, neq, nlt, ndlt, hex(sample) as sample from sqlite_stat4 order by tbl, idx, nlt').all(),
    };
  } finally {
    raw.close();
  }
}

/** As if `table` had never been analyzed (its statistics removed, and the server's connection told). */
async function forget(t: TestApp, table: string) {
  await sql`delete from sqlite_stat1 where tbl = ${table}`.execute(t.database.db);
  await sql`delete from sqlite_stat4 where tbl = ${table}`.execute(t.database.db);
  await sql`analyze sqlite_schema`.execute(t.database.db);
}

const report = (t: TestApp, uuid: string, id: string) =>
  t.app.inject({
    method: 'POST',
    url: `/watch/${uuid}/analytics`,
    headers: { 'user-agent': BROWSER_UA },
    payload: { player_load_id: id, visitor_uuid: id, chapter: 0, type: 'view', percent_watched: 0 },
  });

const threads = () => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]);

describe("SQLite's planner statistics, gathered off the event loop", () => {
  let t: TestApp;
  let dir: string;
  let file: string;
  let org: OrgContext;
  let player: Awaited<ReturnType<typeof createPlayer>>;
  /** One player has every report, an address a few hundred: with the statistics, the address's index. */
  const addressPlan = async (db: Kysely<any>) =>
    (
      await sql<{ detail: string }>`explain query plan select id from analytics_events
        where organization_id = ${org.organizationId} and player_id = ${player.id} and email = ${'viewer1@example.com'}`.execute(db)
    ).rows
      .map((r) => r.detail)
      .join();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-statistics-'));
    file = path.join(dir, 'reelbase.sqlite');
    t = await createTestApp('sqlite', {}, { sqlitePath: file });
    org = await createOrg(t);
    player = await createPlayer(org.api);
    await createPlayer(org.api);
    await seedReports(t, org, player);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("gathers what SQLite's own ANALYZE of the same tables gathers, while the event loop stays free, and the server plans with them at once", async () => {
    const db = t.database.db as Kysely<any>;
    expect(await tablesToAnalyze(db)).toEqual(expect.arrayContaining(['analytics_events', 'players', 'chapters']));
    const loop = performance.eventLoopUtilization();
    await t.database.statistics.refresh();
    // On the server's connection, ANALYZE held the event loop all along (1.0); here it only asks which
    // tables are stale, starts the thread and reads the statistics back.
    expect(performance.eventLoopUtilization(loop).utilization).toBeLessThan(0.5);
    // The server's connection reads them at once: nothing is stale for it any more.
    expect(await tablesToAnalyze(db)).toEqual([]);

    const gathered = statisticsOf(file);
    expect(gathered.stat1).toContainEqual(expect.objectContaining({ tbl: 'analytics_events', idx: 'analytics_events_player_idx' }));
    expect(gathered.stat4.length).toBeGreaterThan(0);
    // The peer: SQLite's own ANALYZE of the same tables, each at once, every entry read.
    const peer = new Database(file);
    try {
      peer.exec('delete from sqlite_stat1; delete from sqlite_stat4');
      peer.pragma('analysis_limit = 0');
      for (const table of new Set(gathered.stat1.map((r) => (r as { tbl: string }).tbl))) peer.exec(`analyze "${table}"`);
    } finally {
      peer.close();
    }
    expect(statisticsOf(file)).toEqual(gathered);
  });

  it('gathers a WITHOUT ROWID table again as ANALYZE of it does, and leaves a table of partial indexes fresh', async () => {
    const db = t.database.db;
    await sql`create table keyed (k text primary key, v int) without rowid`.execute(db);
    await sql`create index keyed_v on keyed (v)`.execute(db);
    await sql`create table halves (id integer primary key, x int)`.execute(db);
    await sql`create index halves_x on halves (x) where x > 5`.execute(db);
    const fill = (n: number) =>
      sql`insert or ignore into keyed (k, v) with recursive n(i) as (select 0 union all select i + 1 from n where i < ${n - 1})
          select 'k' || i, i % 7 from n`.execute(db);
    await fill(100);
    await sql`insert into halves (x) with recursive n(i) as (select 0 union all select i + 1 from n where i < 99) select i % 10 from n`.execute(db);
    await t.database.statistics.refresh();
    expect(await tablesToAnalyze(db as Kysely<any>)).not.toContain('halves');
    // Grown twentyfold: stale, and gathered again over what the first gathering left.
    await fill(2_000);
    expect(await tablesToAnalyze(db as Kysely<any>)).toContain('keyed');
    await t.database.statistics.refresh();
    const of = (table: string) => {
      const all = statisticsOf(file);
      return { stat1: all.stat1.filter((r) => (r as { tbl: string }).tbl === table), stat4: all.stat4.filter((r) => (r as { tbl: string }).tbl === table) };
    };
    const gathered = of('keyed');
    expect(gathered.stat1).toHaveLength(2);
    const peer = new Database(file);
    try {
      peer.exec("delete from sqlite_stat1 where tbl = 'keyed'; delete from sqlite_stat4 where tbl = 'keyed'; analyze keyed");
    } finally {
      peer.close();
    }
    expect(of('keyed')).toEqual(gathered);
    await sql`drop table keyed`.execute(db);
    await sql`drop table halves`.execute(db);
  });

  it('tells the read thread, which plans with them at its next statement', async () => {
    await t.database.statistics.refresh();
    await forget(t, 'analytics_events');
    const thread = new SqliteReadThread(file, t.database.db);
    const statistics = new SqlitePlannerStatistics(t.database.db, file, { onGathered: () => thread.statisticsChanged() });
    const plan = () => addressPlan(thread.db);
    try {
      expect(await plan()).not.toContain('analytics_events_email_idx');
      await statistics.refresh();
      expect(await plan()).toContain('analytics_events_email_idx');
    } finally {
      await thread.close();
      await statistics.close();
    }
  });

  it('lets the server write between two indexes', async () => {
    // The first report of a process loads what reports need (user agents' rules): not this test's matter.
    expect((await report(t, player.uuid, 'warm')).statusCode).toBe(204);
    await forget(t, 'analytics_events');
    const order: string[] = [];
    let first!: () => void;
    const firstAnalyzed = new Promise<void>((resolve) => (first = resolve));
    const statistics = new SqlitePlannerStatistics(t.database.db, file, {
      onAnalyzed: (index) => {
        order.push(`analyzed ${index}`);
        first();
      },
    });
    const gathered = statistics.refresh().then(() => order.push('done'));
    await firstAnalyzed;
    const beacon = await report(t, player.uuid, 'beside');
    expect(beacon.statusCode, beacon.body).toBe(204);
    order.push('written');
    await gathered;
    // The report was kept while indexes were still to be analyzed: the lock was not held for them all.
    expect(order.filter((step) => step.startsWith('analyzed')).length).toBeGreaterThan(3);
    expect(order.indexOf('written')).toBeLessThan(order.length - 3);
    expect(await sql`select 1 from analytics_events where session_id = 'beside'`.execute(t.database.db).then((r) => r.rows.length)).toBe(1);
    await statistics.close();
  });

  it('the housekeeping sweep gathers them', async () => {
    await forget(t, 'analytics_events');
    expect(await tablesToAnalyze(t.database.db as Kysely<any>)).toContain('analytics_events');
    await t.services.housekeeping.sweep();
    expect(await tablesToAnalyze(t.database.db as Kysely<any>)).toEqual([]);
  });

  it("another process's connection reads the statistics this one gathered", async () => {
    await t.database.statistics.refresh();
    const other = openDatabase({ sqlitePath: file });
    const otherThread = new SqliteReadThread(file, other.db);
    const follower = new SqlitePlannerStatistics(other.db, file, { onGathered: () => otherThread.statisticsChanged() });
    const staleThere = () => tablesToAnalyze(other.db as Kysely<any>);
    // The thread has no clock of its own: it reads new statistics when the follower tells it.
    const threadPlan = () => addressPlan(otherThread.db);
    const until = async (check: (tables: string[]) => boolean) => {
      for (const deadline = Date.now() + 3_000; !check(await staleThere()) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
      return staleThere();
    };
    try {
      expect(await staleThere()).not.toContain('analytics_events');
      follower.follow(50);
      await new Promise((r) => setTimeout(r, 100));
      // Without following, a connection keeps the statistics it read when it opened.
      await forget(t, 'analytics_events');
      expect(await until((tables) => tables.includes('analytics_events'))).toContain('analytics_events');
      expect(await threadPlan()).not.toContain('analytics_events_email_idx');
      await t.database.statistics.refresh();
      expect(await until((tables) => !tables.includes('analytics_events'))).not.toContain('analytics_events');
      for (const deadline = Date.now() + 3_000; !(await threadPlan()).includes('analytics_events_email_idx') && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await threadPlan()).toContain('analytics_events_email_idx');
    } finally {
      await otherThread.close();
      await follower.close();
      await other.destroy();
    }
  });

  it('closing the database ends a gathering under way', async () => {
    const other = path.join(dir, 'closing.sqlite');
    const app = await createTestApp('sqlite', {}, { sqlitePath: other });
    const o = await createOrg(app);
    await seedReports(app, o, await createPlayer(o.api));
    const before = threads();
    const stale = await tablesToAnalyze(app.database.db as Kysely<any>);
    const statistics = new SqlitePlannerStatistics(app.database.db, other);
    const gathering = statistics.refresh();
    for (const deadline = Date.now() + 2_000; threads() <= before && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 5));
    expect(threads()).toBeGreaterThan(before);
    await statistics.close();
    await gathering;
    expect(threads()).toBeLessThanOrEqual(before);
    // It stopped before the last of them (in the file, not as this connection saw it): the rest
    // waits for the next sweep.
    const raw = new Database(other, { readonly: true });
    try {
      const analyzed = new Set(raw.prepare('select tbl from sqlite_stat1').pluck().all() as string[]);
      expect(stale.filter((table) => !analyzed.has(table)).length).toBeGreaterThan(0);
    } finally {
      raw.close();
    }
    await app.close();
  });
});

describe("SQLite's planner statistics in memory", () => {
  it('are gathered on the connection itself', async () => {
    const t = await createTestApp('sqlite');
    try {
      const org = await createOrg(t);
      await createPlayer(org.api);
      expect(await tablesToAnalyze(t.database.db as Kysely<any>)).toContain('players');
      await t.services.housekeeping.sweep();
      expect(await tablesToAnalyze(t.database.db as Kysely<any>)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
