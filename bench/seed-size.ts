/**
 * The sizes of issue 15, seeded by SQL in one statement per table (generate_series on PostgreSQL, a
 * recursive CTE on SQLite), after one player of two chapters is made through the API:
 * 1,000,000 CTAs in the organization, 200,000 on the first chapter and 800,000 on the second.
 * Every tenth CTA is a draft; every hundredth says "webinar" in its description. Then 100,000
 * live broadcasts (streams and instances), a million players and a million videos in the same
 * organization.
 */
import { analyzeStaleTables } from '../src/db/sqlite-statistics.ts';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../src/db/database.ts';

/** The rows n.i = 1 … count, as a FROM item: generate_series on PostgreSQL, a recursive CTE on SQLite. */
export function numbersTo(dialect: Database['dialect'], count: number) {
  return dialect === 'postgres'
    ? sql`(SELECT generate_series(1, ${sql.lit(count)}) AS i) AS n`
    : sql`(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${sql.lit(count)}) SELECT i FROM s) AS n`;
}

export const SIZE = {
  ctas: 1_000_000,
  onFirstChapter: 200_000,
  liveInstances: 100_000,
  players: 1_000_000,
  videos: 1_000_000,
  users: 1_000_000,
  tags: 1_000_000,
};

export async function seedSize(app: FastifyInstance, database: Database, token: string) {
  const created = await app.inject({
    method: 'POST',
    url: '/dashboard/v1/players',
    headers: { authorization: `Bearer ${token}` },
    payload: {
      player: {
        name: 'Big player',
        chapters_attributes: [0, 1].map((i) => ({ position: i, video_attributes: { name: `Video ${i}`, upload_url: `https://media.example.com/v${i}.mp4` } })),
      },
    },
  });
  if (created.statusCode !== 201) throw new Error(`seed: the player was not made: ${created.body}`);
  const player = created.json<{ id: number; uuid: string; chapters_attributes: Array<{ id: number }> }>();
  const [first, second] = player.chapters_attributes.map((c) => c.id);
  const { db, dialect } = database;
  const organization = (await db.selectFrom('players').select('organization_id').where('id', '=', player.id).executeTakeFirstOrThrow()).organization_id;
  const now = Math.floor(Date.now() / 1000);
  const started = performance.now();
  await sql`
    INSERT INTO events (organization_id, chapter_id, player_id, event_type, name, description, second, duration, auto_close, width, html,
                        closeable, fullscreen, blur, is_new_contact, state, created_at, updated_at)
    SELECT ${sql.lit(organization)}, CASE WHEN n.i <= ${sql.lit(SIZE.onFirstChapter)} THEN ${sql.lit(first)} ELSE ${sql.lit(second)} END, ${sql.lit(player.id)}, 'simple_html',
           'CTA ' || n.i, CASE WHEN n.i % 100 = 0 THEN 'Join the webinar' ELSE 'Offer' END, n.i % 600, 10, ${sql.lit(true)}, 300,
           '<p>Offer ' || n.i || '</p>', ${sql.lit(true)}, ${sql.lit(false)}, ${sql.lit(false)}, ${sql.lit(false)},
           CASE WHEN n.i % 10 = 0 THEN 'draft' ELSE 'public' END, ${sql.lit(now)}, ${sql.lit(now)}
    FROM ${numbersTo(dialect, SIZE.ctas)}`.execute(db);
  // 100,000 broadcasts, each of a stream of its own: 1 % live, 9 % upcoming, the rest finished;
  // every hundredth a "webinar"; air dates spread over a year.
  await sql`
    INSERT INTO live_streams (organization_id, recurring, stream_key, has_redundant_streams, created_at, updated_at)
    SELECT ${sql.lit(organization)}, ${sql.lit(false)}, 'live_bench_' || n.i, ${sql.lit(false)}, ${sql.lit(now)}, ${sql.lit(now)} FROM ${numbersTo(dialect, SIZE.liveInstances)}`.execute(
    db,
  );
  const firstStream = (await db.selectFrom('live_streams').select('id').where('stream_key', '=', 'live_bench_1').executeTakeFirstOrThrow()).id;
  await sql`
    INSERT INTO live_stream_instances (organization_id, stream_id, player_uuid, name, search_text, status, air_date, created_at, updated_at)
    SELECT ${sql.lit(organization)}, ${sql.lit(firstStream - 1)} + n.i, 'bench-live-' || n.i,
           CASE WHEN n.i % 100 = 0 THEN 'Weekly webinar ' || n.i ELSE 'Show ' || n.i END,
           CASE WHEN n.i % 100 = 0 THEN 'weekly webinar ' || n.i ELSE 'show ' || n.i END,
           CASE WHEN n.i % 100 = 1 THEN 'live' WHEN n.i % 10 = 2 THEN 'unaired' ELSE 'ready' END,
           ${sql.lit(now)} - (n.i * 7919) % 31536000, ${sql.lit(now)}, ${sql.lit(now)}
    FROM ${numbersTo(dialect, SIZE.liveInstances)}`.execute(db);
  // A million players and a million videos, every thousandth named "Webinar recap …".
  for (const table of ['players', 'videos'] as const) {
    await sql`
      INSERT INTO ${sql.table(table)} (organization_id, uuid, name, created_at, updated_at)
      SELECT ${sql.lit(organization)}, ${sql.lit(`bench-${table}-`)} || n.i,
             CASE WHEN n.i % 1000 = 0 THEN 'Webinar recap ' || n.i ELSE 'Item ' || n.i END, ${sql.lit(now)}, ${sql.lit(now)}
      FROM ${numbersTo(dialect, SIZE[table])}`.execute(db);
  }
  // A million users (every thousandth a "Webinar" host, every tenth an editor) and a million tags
  // (every thousandth "…webinar…").
  await sql`
    INSERT INTO users (organization_id, email, first_name, last_name, role, status, created_at, updated_at)
    SELECT ${sql.lit(organization)}, 'user' || n.i || '@example.com', CASE WHEN n.i % 1000 = 0 THEN 'Webinar' ELSE 'Ann' END, 'Lee ' || n.i,
           CASE WHEN n.i % 10 = 0 THEN 'editor' ELSE 'viewer' END, 'active', ${sql.lit(now)}, ${sql.lit(now)}
    FROM ${numbersTo(dialect, SIZE.users)}`.execute(db);
  await sql`
    INSERT INTO tags (organization_id, name, created_at, updated_at)
    SELECT ${sql.lit(organization)}, CASE WHEN n.i % 1000 = 0 THEN 'spring-webinar-' || n.i ELSE 'tag-' || n.i END, ${sql.lit(now)}, ${sql.lit(now)}
    FROM ${numbersTo(dialect, SIZE.tags)}`.execute(db);
  // As autovacuum leaves a table in steady state: statistics, and the visibility map index-only scans
  // need; on SQLite, the statistics the housekeeping sweep gathers (PRAGMA optimize).
  if (dialect === 'postgres') await sql`VACUUM (ANALYZE)`.execute(db);
  else await analyzeStaleTables(db);
  return {
    playerId: player.id,
    playerUuid: player.uuid,
    chapters: [first, second],
    organizationId: organization,
    seedSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
