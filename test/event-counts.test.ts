/**
 * The lists at size (docs/performance.md, "Lists at size") answer their counts from `event_counts`,
 * kept by triggers, and walk a deep page from the nearer end. This checks both against the events
 * themselves through every way an event is written: created, set to draft, moved to another chapter
 * or player, made an organization default, deleted, and removed with its player.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const ctaBody = (chapterId: number, second = 0) => ({ chapter_id: chapterId, second, duration: 5, auto_close: true, width: 300, html: '<p>x</p>' });

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
    // No row of event_counts is left at zero (a removed chapter's rows go with its last event).
    const zero = await t.database.db.selectFrom('event_counts').select('n').where('n', '<=', 0).execute();
    expect(zero).toEqual([]);
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
    expect(await t.database.db.selectFrom('event_counts').select('n').where('chapter_id', '=', c3).execute()).toEqual([]);

    // The counts are the events' own, row for row.
    const counted = await t.database.db
      .selectFrom('event_counts')
      .select(['chapter_id', 'event_type', 'state', 'n'])
      .where('organization_id', '=', org.organizationId)
      .orderBy(['chapter_id', 'event_type', 'state'])
      .execute();
    const grouped = await sql<{ chapter_id: number; event_type: string; state: string; n: number }>`
      SELECT COALESCE(chapter_id, 0) AS chapter_id, event_type, state, COUNT(*) AS n FROM events WHERE organization_id = ${org.organizationId}
      GROUP BY COALESCE(chapter_id, 0), event_type, state ORDER BY 1, 2, 3`.execute(t.database.db);
    expect(counted.map((r) => ({ ...r, n: Number(r.n) }))).toEqual(grouped.rows.map((r) => ({ ...r, n: Number(r.n) })));
  });

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
