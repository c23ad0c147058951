/**
 * The analytics size of issue 16, seeded by SQL (generate_series on PostgreSQL, a recursive CTE on
 * SQLite) after one player is made through the API: 1,000 players with a video each, one CTA per
 * player, and 10,000,000 stored reports over them and the last 90 days. Reports come by load (session)
 * of 10: a load, the start and the 25/50/75/100 % milestones, an attention report, a CTA impression,
 * then a click, an identified view or nothing. A load belongs to one player; 300,000 visitors. Then the
 * rollup job's work over all of them (timed: `rollupSeconds`).
 */
import { sql } from 'kysely';
import { analyzeStaleTables } from '../src/db/sqlite-statistics.ts';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../src/db/database.ts';
import { RollupRepository } from '../src/modules/analytics/rollup.repository.ts';
import { RollupService } from '../src/modules/analytics/rollup.service.ts';
import { numbersTo } from './seed-size.ts';
import { gatherBesideReports, type StatisticsBeside } from './statistics-beside.ts';

export const ANALYTICS_SIZE = {
  events: Number(process.env.BENCH_ANALYTICS_EVENTS ?? 10_000_000),
  // BENCH_ANALYTICS_PLAYERS=1: every report on one player (a very popular one).
  players: Math.max(1, Number(process.env.BENCH_ANALYTICS_PLAYERS ?? 1000)),
  days: 90,
  visitors: 300_000,
};
const PER_LOAD = 10;
const DAY_MS = 86_400_000;

export async function seedAnalytics(app: FastifyInstance, database: Database, token: string) {
  const created = await app.inject({
    method: 'POST',
    url: '/dashboard/v1/players',
    headers: { authorization: `Bearer ${token}` },
    payload: {
      player: { name: 'Seed', chapters_attributes: [{ position: 0, video_attributes: { name: 'Seed', upload_url: 'https://media.example.com/v.mp4' } }] },
    },
  });
  if (created.statusCode !== 201) throw new Error(`seed: the player was not made: ${created.body}`);
  const seedPlayer = created.json<{ id: number; uuid: string; chapters_attributes: Array<{ id: number }> }>();
  const chapter = seedPlayer.chapters_attributes[0].id;
  const { db, dialect } = database;
  const organization = (await db.selectFrom('players').select('organization_id').where('id', '=', seedPlayer.id).executeTakeFirstOrThrow()).organization_id;
  const now = Math.floor(Date.now() / 1000);
  const started = performance.now();
  const { players, events, days, visitors } = ANALYTICS_SIZE;

  for (const table of ['players', 'videos'] as const) {
    await sql`
      INSERT INTO ${sql.table(table)} (organization_id, uuid, name, created_at, updated_at)
      SELECT ${sql.lit(organization)}, ${sql.lit(`analytics-${table}-`)} || n.i, 'Item ' || n.i, ${sql.lit(now)}, ${sql.lit(now)}
      FROM ${numbersTo(dialect, players)}`.execute(db);
  }
  const firstPlayer = (await db.selectFrom('players').select('id').where('uuid', '=', 'analytics-players-1').executeTakeFirstOrThrow()).id;
  const firstVideo = (await db.selectFrom('videos').select('id').where('uuid', '=', 'analytics-videos-1').executeTakeFirstOrThrow()).id;
  await sql`UPDATE videos SET seconds = 120 WHERE organization_id = ${organization} AND uuid LIKE 'analytics-videos-%'`.execute(db);
  // One CTA per player (on the seed player's chapter: the reports name them by id).
  await sql`
    INSERT INTO events (organization_id, chapter_id, player_id, event_type, name, second, duration, auto_close, width, html,
                        closeable, fullscreen, blur, is_new_contact, state, created_at, updated_at)
    SELECT ${sql.lit(organization)}, ${sql.lit(chapter)}, ${sql.lit(seedPlayer.id)}, 'simple_html', 'CTA ' || n.i, 5, 10, ${sql.lit(true)}, 300,
           '<p>Offer</p>', ${sql.lit(true)}, ${sql.lit(false)}, ${sql.lit(false)}, ${sql.lit(false)}, 'public', ${sql.lit(now)}, ${sql.lit(now)}
    FROM ${numbersTo(dialect, players)}`.execute(db);
  const firstCta = (
    await db.selectFrom('events').select('id').where('name', '=', 'CTA 1').where('organization_id', '=', organization).executeTakeFirstOrThrow()
  ).id;

  // n.i - 1 = load * 10 + k. The load decides the player, the visitor and the time.
  const load = sql`((n.i - 1) / ${sql.lit(PER_LOAD)})`;
  const k = sql`((n.i - 1) % ${sql.lit(PER_LOAD)})`;
  const player = sql`(${load} % ${sql.lit(players)})`;
  const nowMs = Date.now();
  await sql`
    INSERT INTO analytics_events (organization_id, player_id, video_id, chapter, type, percent, event_id, watched_seconds, watched, buckets,
                                  email, visitor_id, session_id, origin, device, browser, country, dedup_key, created_at)
    SELECT ${sql.lit(organization)}, ${sql.lit(firstPlayer)} + ${player}, ${sql.lit(firstVideo)} + ${player}, 0,
           CASE WHEN ${k} = 0 THEN 'load' WHEN ${k} <= 5 THEN 'view' WHEN ${k} = 6 THEN 'attention_span' WHEN ${k} = 7 THEN 'cta_impression'
                WHEN ${k} = 8 THEN 'cta_click' ELSE 'identified_view' END,
           CASE WHEN ${k} BETWEEN 1 AND 5 THEN (${k} - 1) * 25 END,
           CASE WHEN ${k} IN (7, 8) THEN ${sql.lit(firstCta)} + ${player} END,
           CASE WHEN ${k} = 6 THEN 30 + ${load} % 90 END,
           CASE WHEN ${k} = 6 THEN '[[0,' || (30 + ${load} % 90) || ']]' END,
           NULL,
           CASE WHEN ${k} = 9 THEN 'viewer' || (${load} % 50000) || '@example.com' END,
           'visitor-' || (${load} % ${sql.lit(visitors)}), 'load-' || ${load}, 'https://www.example.com',
           CASE WHEN ${load} % 3 = 0 THEN 'mobile' ELSE 'desktop' END, CASE WHEN ${load} % 2 = 0 THEN 'Chrome' ELSE 'Safari' END,
           CASE ${load} % 4 WHEN 0 THEN 'US' WHEN 1 THEN 'GB' WHEN 2 THEN 'DE' ELSE NULL END,
           'seed:' || n.i,
           ${sql.lit(nowMs)} - (cast(${load} as bigint) * 7919) % ${sql.lit(days * DAY_MS)}
    FROM ${numbersTo(dialect, events)}`.execute(db);
  // What ingest writes beside each identified view: the address, last given then, in the organization and at its player.
  await sql`
    INSERT INTO analytics_identified (organization_id, email, last_seen)
    SELECT organization_id, email, max(created_at) FROM analytics_events WHERE type = 'identified_view' GROUP BY organization_id, email`.execute(db);
  await sql`
    INSERT INTO analytics_identified_players (organization_id, player_id, email, last_seen)
    SELECT organization_id, player_id, email, max(created_at) FROM analytics_events WHERE type = 'identified_view' GROUP BY organization_id, player_id, email`.execute(
    db,
  );
  const seedSeconds = Math.round((performance.now() - started) / 1000);
  // What autovacuum, or on SQLite the housekeeping sweep, leaves. On SQLite in a file, gathered as the
  // sweep gathers them, beside viewers' reports, and timed (every table is stale: the first sweep
  // after an upgrade).
  const analyze = () => (dialect === 'postgres' ? sql`VACUUM (ANALYZE)`.execute(db) : analyzeStaleTables(db));
  let statistics: StatisticsBeside[] | undefined;
  if (dialect === 'sqlite' && database.file) statistics = await gatherBesideReports(app, database, seedPlayer.uuid);
  else await analyze();
  // The daily rollups, as the analytics.rollup job makes them from the stored reports.
  const rollupStarted = performance.now();
  // Nothing else is served meanwhile: big batches without a rest between them.
  await new RollupService(database.db, { intervalSeconds: 30, batchSize: 20_000, rest: false }, new RollupRepository(database.db)).catchUp();
  const rollupSeconds = Math.round((performance.now() - rollupStarted) / 1000);
  await analyze();
  return { organizationId: organization, firstPlayer, firstVideo, firstCta, seedSeconds, rollupSeconds, ...(statistics ? { statistics } : {}) };
}
