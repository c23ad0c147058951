/**
 * The lists at size (docs/performance.md, "Lists at size") answer their counts from `event_counts`,
 * kept by triggers, and walk a deep page from the nearer end. This checks both against the events
 * themselves through every way an event is written: created, set to draft, moved to another chapter
 * or player, made an organization default, deleted, and removed with its player.
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTER_SHARDS, foldCounterShards, SHARDED_COUNTERS } from '../src/db/counter-shards.ts';
import type { DB } from '../src/db/schema.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const ctaBody = (chapterId: number, second = 0) => ({ chapter_id: chapterId, second, duration: 5, auto_close: true, width: 300, html: '<p>x</p>' });

type WhereOf = SelectQueryBuilder<DB, 'event_counts', object>;

interface Truth {
  id: number;
  chapter_id: number | null;
  player_id: number | null;
  state: string;
  event_type: string;
}

describe.each(dialects)('maintained event counts, and pages walked from either end, on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(() => t.close());

  /** The organization's events as the table holds them, with each one's player through its chapter. */
  async function truth(): Promise<Truth[]> {
    const rows = await t.database.db
      .selectFrom('events')
      .leftJoin('chapters', 'chapters.id', 'events.chapter_id')
      .select(['events.id', 'events.chapter_id', 'chapters.player_id', 'events.state', 'events.event_type'])
      .where('events.organization_id', '=', org.organizationId)
      .orderBy('events.id')
      .execute();
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Every page of a list (3 per page), checked against the expected ids, and the count on each. */
  async function expectList(url: string, key: string, expected: number[]) {
    const sep = url.includes('?') ? '&' : '?';
    const pages = Math.max(1, Math.ceil(expected.length / 3));
    for (let page = 1; page <= pages + 1; page++) {
      const res = await org.api.get(`${url}${sep}per_page=3&page=${page}`);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.summary.count, `${url} page ${page}`).toBe(expected.length);
      expect(
        res.body[key].map((e: { id: number }) => e.id),
        `${url} page ${page}`,
      ).toEqual(expected.slice((page - 1) * 3, page * 3));
    }
  }

  async function expectAllConsistent(players: Array<{ id: number; uuid: string; chapters_attributes: Array<{ id: number }> }>) {
    const events = await truth();
    const ids = (f: (e: Truth) => boolean) => events.filter(f).map((e) => e.id);
    await expectList(
      `${P}/events`,
      'events',
      ids(() => true),
    );
    await expectList(
      `${P}/events?state=draft`,
      'events',
      ids((e) => e.state === 'draft'),
    );
    for (const player of players) {
      for (const chapter of player.chapters_attributes)
        await expectList(
          `${P}/chapters/${chapter.id}/ctas`,
          'ctas',
          ids((e) => e.chapter_id === chapter.id),
        );
      await expectList(
        `${P}/players/${player.id}/ctas`,
        'ctas',
        ids((e) => e.player_id === player.id),
      );
      await expectList(
        `${P}/players/${player.id}/ctas?include_defaults=true`,
        'ctas',
        ids((e) => e.player_id === player.id || e.chapter_id === null),
      );
      const meta = (await org.api.get(`${P}/players/${player.id}/cta_meta`)).body;
      expect(meta.num_public_ctas).toBe(ids((e) => e.player_id === player.id && e.state === 'public').length);
      expect(meta.num_draft_ctas).toBe(ids((e) => e.player_id === player.id && e.state === 'draft').length);
      const eventMeta = (await org.api.get(`${P}/players/uuid=${player.uuid}/event_meta`)).body;
      const own = events.filter((e) => e.player_id === player.id || e.chapter_id === null);
      expect(eventMeta.num_events).toBe(own.length);
      expect(eventMeta.num_default_events).toBe(ids((e) => e.chapter_id === null).length);
      expect(eventMeta.event_types.simple_overlay).toBe(own.filter((e) => e.event_type === 'simple_overlay').length);
    }
    // No key counts below zero (on PostgreSQL a shard's row may, a key's rows summed may not).
    const below = await t.database.db
      .selectFrom('event_counts')
      .select(['organization_id', 'chapter_id', 'event_type', 'state'])
      .groupBy(['organization_id', 'chapter_id', 'event_type', 'state'])
      .having((eb) => eb.fn.sum('n'), '<', 0)
      .execute();
    expect(below).toEqual([]);
    if (dialect === 'sqlite') expect(await t.database.db.selectFrom('event_counts').select('n').where('n', '<=', 0).execute()).toEqual([]);
  }

  /** `event_counts` summed per key (PostgreSQL keeps a key in shards, migration 0035), keys counting nothing left out. */
  async function summedCounts(where: (qb: WhereOf) => WhereOf) {
    const rows = await where(t.database.db.selectFrom('event_counts'))
      .select((eb) => ['chapter_id', 'event_type', 'state', eb.fn.sum<number>('n').as('n')])
      .groupBy(['organization_id', 'chapter_id', 'event_type', 'state'])
      .orderBy(['chapter_id', 'event_type', 'state'])
      .execute();
    return rows.map((r) => ({ ...r, n: Number(r.n) })).filter((r) => r.n !== 0);
  }

  it('stay exact through creates, state changes, moves, defaults, deletes and a player removed with its chapters', { timeout: 60_000 }, async () => {
    const first = await createPlayer(org.api, {}, 2);
    const second = await createPlayer(org.api, {}, 1);
    const [c1, c2] = first.chapters_attributes.map((c: { id: number }) => c.id);
    const c3 = second.chapters_attributes[0].id;
    const made: number[] = [];
    const cta = async (chapterId: number) => {
      const res = await org.api.post(`${P}/ctas`, ctaBody(chapterId, made.length));
      expect(res.status, res.raw).toBe(201);
      made.push(res.body.id);
      return res.body.id as number;
    };
    // Interleaved, so that a player's list spans both chapters in id order.
    for (let i = 0; i < 7; i++) {
      await cta(c1);
      if (i < 5) await cta(c2);
      if (i < 3) await cta(c3);
    }
    for (const name of ['Default A', 'Default B']) {
      const res = await org.api.post(`${P}/events`, { event_type: 'simple_post_roll', name, html: '<p>d</p>' });
      expect(res.status, res.raw).toBe(201);
    }
    // Another organization's events count nowhere here.
    const elsewhere = await createPlayer(other.api, {}, 1);
    expect((await other.api.post(`${P}/ctas`, ctaBody(elsewhere.chapters_attributes[0].id))).status).toBe(201);
    await expectAllConsistent([first, second]);

    for (const id of [made[0], made[3], made[4]]) expect((await org.api.patch(`${P}/events/${id}`, { state: 'draft' })).status).toBe(200);
    expect((await org.api.patch(`${P}/events/${made[1]}`, { chapter_id: c3 })).status).toBe(200); // to the other player
    expect((await org.api.patch(`${P}/events/${made[2]}`, { chapter_id: null })).status).toBe(200); // now a default
    expect((await org.api.patch(`${P}/events/${made[5]}`, { event_type: 'fullscreen' })).status).toBe(200);
    await expectAllConsistent([first, second]);

    for (const id of [made[0], made[6], made[7]]) expect((await org.api.delete(`${P}/ctas/${id}`)).status).toBe(200);
    await expectAllConsistent([first, second]);

    expect((await org.api.delete(`${P}/players/${second.id}`)).status).toBe(200);
    const left = await truth();
    expect(left.some((e) => e.chapter_id === c3)).toBe(false);
    await expectAllConsistent([first]);
    // The removed chapter's counts went with its events.
    expect(await summedCounts((qb) => qb.where('chapter_id', '=', c3))).toEqual([]);

    // The counts are the events' own, key for key.
    const counted = await summedCounts((qb) => qb.where('organization_id', '=', org.organizationId));
    const grouped = await sql<{ chapter_id: number; event_type: string; state: string; n: number }>`
      SELECT COALESCE(chapter_id, 0) AS chapter_id, event_type, state, COUNT(*) AS n FROM events WHERE organization_id = ${org.organizationId}
      GROUP BY COALESCE(chapter_id, 0), event_type, state ORDER BY 1, 2, 3`.execute(t.database.db);
    expect(counted).toEqual(grouped.rows.map((r) => ({ ...r, n: Number(r.n) })));
  });

  if (dialect === 'postgres') {
    /** Connections of their own to the test's schema, on two different counter shards. */
    async function twoShards(): Promise<{ a: pg.Client; b: pg.Client; close(): Promise<void> }> {
      const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.database.db)).rows[0].s;
      const opened: pg.Client[] = [];
      const byShard = new Map<number, pg.Client>();
      while (byShard.size < 2) {
        const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, options: `-c search_path=${schema}` });
        await client.connect();
        opened.push(client);
        const pid = Number((await client.query('select pg_backend_pid() as pid')).rows[0].pid);
        if (!byShard.has(pid % COUNTER_SHARDS)) byShard.set(pid % COUNTER_SHARDS, client);
      }
      const [a, b] = [...byShard.values()] as [pg.Client, pg.Client];
      return { a, b, close: async () => void (await Promise.all(opened.map((c) => c.end()))) };
    }

    it("PostgreSQL: two connections write one chapter's events and the organization's tags at once, neither waiting for the other's counters", async () => {
      const player = await createPlayer(org.api, {}, 1);
      const chapterId = player.chapters_attributes[0].id as number;
      const first = await org.api.post(`${P}/ctas`, ctaBody(chapterId));
      expect(first.status, first.raw).toBe(201);
      const { a, b, close } = await twoShards();
      try {
        const columns = (
          await a.query(`select string_agg(quote_ident(column_name), ', ') as c from information_schema.columns
            where table_schema = current_schema() and table_name = 'events' and column_name <> 'id'`)
        ).rows[0].c as string;
        const copy = `INSERT INTO events (${columns}) SELECT ${columns} FROM events WHERE id = $1`;
        const tag = `INSERT INTO tags (organization_id, name, created_at, updated_at) VALUES ($1, $2, 0, 0)`;
        await a.query('BEGIN');
        await a.query(copy, [first.body.id]);
        await a.query(tag, [org.organizationId, 'concurrent a']);
        // While the first has not committed: one counter row per key, locked by it, held the second here.
        await b.query('BEGIN');
        await b.query(`SET LOCAL lock_timeout = '3s'`);
        await b.query(copy, [first.body.id]);
        await b.query(tag, [org.organizationId, 'concurrent b']);
        await b.query('COMMIT');
        await a.query('COMMIT');
      } finally {
        await close();
      }
      const list = (await org.api.get(`${P}/chapters/${chapterId}/ctas?per_page=1`)).body;
      expect(list.summary.count).toBe(3);
      expect((await org.api.get(`${P}/players/${player.id}/cta_meta`)).body.num_public_ctas).toBe(3);
      // Three pages of one each, found through the runs' counts too.
      const third = (await org.api.get(`${P}/players/${player.id}/ctas?per_page=1&page=3`)).body;
      expect(third.ctas).toHaveLength(1);
      // Tags are counted per organization (row_counts, row_pages) in shards too.
      const tags = (await org.api.get(`${P}/tags?per_page=1`)).body;
      const truthOfTags = await t.database.db
        .selectFrom('tags')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('organization_id', '=', org.organizationId)
        .executeTakeFirstOrThrow();
      expect(tags.summary.count).toBe(Number(truthOfTags.n));
    });

    it('PostgreSQL: folding the shards keeps every count, one row a key, and drops keys that count nothing', async () => {
      const player = await createPlayer(org.api, {}, 2);
      const [c1, c2] = player.chapters_attributes.map((c: { id: number }) => c.id) as [number, number];
      const { a, b, close } = await twoShards();
      const made: number[] = [];
      try {
        for (const id of [c1, c1, c2, c2]) made.push((await org.api.post(`${P}/ctas`, ctaBody(id))).body.id);
        // Counted on the API's shards, taken away on these two: keys in several rows, some summing to nothing.
        await a.query('DELETE FROM events WHERE id = $1', [made[0]]);
        await b.query('DELETE FROM events WHERE id = $1', [made[2]]);
        await b.query('DELETE FROM events WHERE id = $1', [made[3]]);
        // A writer in the middle of a transaction holds its shard's rows of chapter 1 and of the
        // organization's runs: a fold leaves those for later, and never waits for the writer.
        await a.query('BEGIN');
        await a.query('DELETE FROM events WHERE id = $1', [made[1]]);
        const waited = await Promise.race([
          foldCounterShards(t.database.db, 1000).then(() => false),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 3000)),
        ]);
        await a.query('ROLLBACK');
        expect(waited, 'the fold waited for a writer').toBe(false);
      } finally {
        await close();
      }
      const before = await summedCounts((qb) => qb.where('organization_id', '=', org.organizationId));
      const pages = () =>
        sql<{ key: string; n: string }>`SELECT organization_id || ' ' || scope || ' ' || scope_id || ' ' || bucket AS key, SUM(n) AS n
          FROM event_pages GROUP BY 1 HAVING SUM(n) <> 0 ORDER BY 1`.execute(t.database.db);
      const pagesBefore = (await pages()).rows;
      // The housekeeping sweep folds them.
      expect((await t.services.housekeeping.sweep()).counter_rows).toBeGreaterThan(0);
      expect(await summedCounts((qb) => qb.where('organization_id', '=', org.organizationId))).toEqual(before);
      expect((await pages()).rows).toEqual(pagesBefore);
      for (const { table, key } of SHARDED_COUNTERS) {
        const left = await sql<{ rows: string; keys: string; zero: string }>`
          SELECT COUNT(*) AS rows, COUNT(DISTINCT (${sql.raw(key.join(', '))})) AS keys, COUNT(*) FILTER (WHERE n = 0) AS zero
          FROM ${sql.table(table)}`.execute(t.database.db);
        expect(Number(left.rows[0].rows), table).toBe(Number(left.rows[0].keys));
        expect(Number(left.rows[0].zero), table).toBe(0);
      }
      // Chapter 2's events are all gone: its keys went with the fold.
      expect(await t.database.db.selectFrom('event_counts').select('n').where('chapter_id', '=', c2).execute()).toEqual([]);
      expect(await foldCounterShards(t.database.db, 1000)).toBe(0);
      expect((await org.api.get(`${P}/players/${player.id}/cta_meta`)).body.num_public_ctas).toBe(1);
    });
  }

  it('an event made on a chapter carries that chapter’s player', async () => {
    const player = await createPlayer(org.api, {}, 1);
    const res = await org.api.post(`${P}/ctas`, ctaBody(player.chapters_attributes[0].id));
    expect(res.status, res.raw).toBe(201);
    const row = await t.database.db.selectFrom('events').select(['player_id']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.player_id).toBe(player.id);
  });

  it('players and videos: the unfiltered count comes from row_counts and stays exact through creates and deletes', async () => {
    const o = await createOrg(t);
    const count = async (what: 'players' | 'videos') => (await o.api.get(`${P}/${what}?per_page=1`)).body.summary.count as number;
    const truthOf = async (what: 'players' | 'videos') =>
      Number(
        (
          await t.database.db
            .selectFrom(what)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('organization_id', '=', o.organizationId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count('players')).toBe(0);
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await createPlayer(o.api, {}, 2));
    expect(await count('players')).toBe(4);
    expect(await count('videos')).toBe(8);
    expect((await o.api.delete(`${P}/players/${made[0].id}`)).status).toBe(200);
    const video = made[1].chapters_attributes[0].video_attributes.id;
    expect((await o.api.delete(`${P}/videos/${video}`)).status).toBe(200);
    for (const what of ['players', 'videos'] as const) expect(await count(what)).toBe(await truthOf(what));
    // Another organization's rows are its own.
    await createPlayer(other.api, {}, 1);
    expect(await count('players')).toBe(await truthOf('players'));
  });
});
