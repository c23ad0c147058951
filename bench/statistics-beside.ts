/**
 * SQLite's planner statistics gathered as the housekeeping sweep gathers them (src/db/sqlite-statistics.ts),
 * on a freshly seeded file (every table stale, as at the first sweep after an upgrade), while viewers'
 * reports keep coming through the API: how long the gathering took, the longest one index held the
 * file's write lock, how long the reports waited meanwhile, and the event loop's longest delay. Then,
 * as a baseline in the same run, the statistics forgotten and gathered again as the sweep did before
 * (`PRAGMA optimize` on the server's connection).
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../src/db/database.ts';
import { sql } from 'kysely';
import { analyzeStaleTables, SqlitePlannerStatistics } from '../src/db/sqlite-statistics.ts';
import { percentile } from './size.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** A report every this many ms, one at a time. */
const EVERY_MS = 10;

export interface StatisticsBeside {
  how: 'thread' | 'connection';
  statisticsSeconds: number;
  longestIndexMs: number;
  reportsBeside: number;
  reportP99Ms: number;
  reportMaxMs: number;
  loopDelayMaxMs: number;
}

export async function gatherBesideReports(app: FastifyInstance, database: Database, playerUuid: string): Promise<StatisticsBeside[]> {
  const held: number[] = [];
  const statistics = new SqlitePlannerStatistics(database.db, database.file ?? null, { onAnalyzed: (_index, ms) => held.push(ms) });
  const onThread = await besideReports(app, playerUuid, 'thread', () => statistics.refresh());
  await sql`delete from sqlite_stat1`.execute(database.db);
  await sql`delete from sqlite_stat4`.execute(database.db);
  await sql`analyze sqlite_schema`.execute(database.db);
  const onConnection = await besideReports(app, playerUuid, 'connection', () => analyzeStaleTables(database.db));
  return [
    { ...onThread, longestIndexMs: Math.round(Math.max(0, ...held)) },
    // One ANALYZE of every stale table: the lock is held all along.
    { ...onConnection, longestIndexMs: onConnection.statisticsSeconds * 1000 },
  ];
}

async function besideReports(
  app: FastifyInstance,
  playerUuid: string,
  how: StatisticsBeside['how'],
  gather: () => Promise<void>,
): Promise<Omit<StatisticsBeside, 'longestIndexMs'>> {
  const waited: number[] = [];
  const report = async (i: number) => {
    const res = await app.inject({
      method: 'POST',
      url: `/watch/${playerUuid}/analytics`,
      remoteAddress: `10.9.${(i >> 8) & 255}.${i & 255}`,
      headers: { 'user-agent': UA },
      payload: { player_load_id: `statistics-${i}`, visitor_uuid: `statistics-${i}`, chapter: 0, type: 'view', percent_watched: 0 },
    });
    if (res.statusCode !== 204) throw new Error(`a report beside the statistics: ${res.statusCode} ${res.body}`);
  };
  // The process's first report loads what reports need (user agents' rules, the player): not timed.
  for (let i = 0; i < 20; i++) await report(-1 - i - (how === 'thread' ? 0 : 100));
  let going = true;
  const reporter = (async () => {
    for (let i = 0; going; i++) {
      const started = performance.now();
      await report(how === 'thread' ? i : 100_000 + i);
      waited.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
    }
  })();
  // The longest gap between two turns of a 5 ms timer: how long the event loop was held at most.
  let last = performance.now();
  let held = 0;
  const ticking = setInterval(() => {
    const now = performance.now();
    held = Math.max(held, now - last - 5);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    await gather();
  } finally {
    going = false;
    await reporter;
    clearInterval(ticking);
  }
  return {
    how,
    statisticsSeconds: Math.round((performance.now() - started) / 100) / 10,
    reportsBeside: waited.length,
    reportP99Ms: Math.round(percentile(waited, 99) * 10) / 10,
    reportMaxMs: Math.round(Math.max(0, ...waited)),
    loopDelayMaxMs: Math.round(held),
  };
}
