/**
 * The sizes of issue 15, seeded by SQL in one statement per table (generate_series on PostgreSQL, a
 * recursive CTE on SQLite), after one player of two chapters is made through the API:
 * 1,000,000 CTAs in the organization, 200,000 on the first chapter and 800,000 on the second.
 * Every tenth CTA is a draft; every hundredth says "webinar" in its description.
 */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../src/db/database.ts';

export const SIZE = { ctas: 1_000_000, onFirstChapter: 200_000 };

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
  const numbers =
    dialect === 'postgres'
      ? sql`(SELECT generate_series(1, ${sql.lit(SIZE.ctas)}) AS i) AS n`
      : sql`(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${sql.lit(SIZE.ctas)}) SELECT i FROM s) AS n`;
  const started = performance.now();
  await sql`
    INSERT INTO events (organization_id, chapter_id, player_id, event_type, name, description, second, duration, auto_close, width, html,
                        closeable, fullscreen, blur, is_new_contact, state, created_at, updated_at)
    SELECT ${sql.lit(organization)}, CASE WHEN n.i <= ${sql.lit(SIZE.onFirstChapter)} THEN ${sql.lit(first)} ELSE ${sql.lit(second)} END, ${sql.lit(player.id)}, 'simple_html',
           'CTA ' || n.i, CASE WHEN n.i % 100 = 0 THEN 'Join the webinar' ELSE 'Offer' END, n.i % 600, 10, ${sql.lit(true)}, 300,
           '<p>Offer ' || n.i || '</p>', ${sql.lit(true)}, ${sql.lit(false)}, ${sql.lit(false)}, ${sql.lit(false)},
           CASE WHEN n.i % 10 = 0 THEN 'draft' ELSE 'public' END, ${sql.lit(now)}, ${sql.lit(now)}
    FROM ${numbers}`.execute(db);
  // As autovacuum leaves a table in steady state: statistics, and the visibility map index-only scans need.
  if (dialect === 'postgres') await sql`VACUUM (ANALYZE) events`.execute(db);
  else await sql`ANALYZE`.execute(db);
  return { playerId: player.id, playerUuid: player.uuid, chapters: [first, second], seedSeconds: Math.round((performance.now() - started) / 100) / 10 };
}
