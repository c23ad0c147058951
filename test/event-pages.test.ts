/**
 * Deep pages of the event lists start from `event_pages` (migration 0033: each list's events per run
 * of 4,096 ids, kept by triggers) instead of walking every index entry before them
 * (docs/performance.md, "Lists at size"). With 40,000 events seeded in one statement, interleaved over
 * two players' chapters, the defaults and another organization, every deep page of every counted list
 * must be the events' own, before and after the API and bulk statements change them; the counts
 * must equal a recount of the events; and a page must really be found through them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { numbersTo } from '../bench/seed-size.ts';
import { PAGE_RUN_BITS } from '../src/db/paging.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const SEEDED = 40_000;
const PER_PAGE = 200;

interface Truth {
  id: number;
  chapter_id: number | null;
  player_id: number | null;
}

describe.each(dialects)('deep pages from the counts per run of ids, on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let a: { id: number; chapters: number[] };
  let b: { id: number; chapters: number[] };
  let bRemoved = false;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    const pa = await createPlayer(org.api, {}, 2);
    const pb = await createPlayer(org.api, {}, 1);
    const po = await createPlayer(other.api, {}, 1);
    a = { id: pa.id, chapters: pa.chapters_attributes.map((c: { id: number }) => c.id) };
    b = { id: pb.id, chapters: pb.chapters_attributes.map((c: { id: number }) => c.id) };
    // Of every six ids: two on A's first chapter, one on its second, one on B's, one default, one
    // another organization's (so that the lists' runs of ids are not dense).
    const now = Math.floor(Date.now() / 1000);
    const chapterOf = `CASE n.i % 6 WHEN 0 THEN ${a.chapters[0]} WHEN 1 THEN ${a.chapters[0]} WHEN 2 THEN ${a.chapters[1]} WHEN 3 THEN ${b.chapters[0]}
      WHEN 4 THEN null ELSE ${po.chapters_attributes[0].id} END`;
    const playerOf = `CASE WHEN n.i % 6 < 3 THEN ${a.id} WHEN n.i % 6 = 3 THEN ${b.id} WHEN n.i % 6 = 4 THEN null ELSE ${po.id} END`;
    const orgOf = `CASE WHEN n.i % 6 = 5 THEN ${other.organizationId} ELSE ${org.organizationId} END`;
    await sql`
      INSERT INTO events (organization_id, chapter_id, player_id, event_type, name, second, duration, auto_close, width, html,
                          closeable, fullscreen, blur, is_new_contact, state, created_at, updated_at)
      SELECT ${sql.raw(orgOf)}, ${sql.raw(chapterOf)}, ${sql.raw(playerOf)}, 'simple_html', 'CTA ' || n.i, 0, 10, ${sql.lit(true)}, 300,
             '<p>x</p>', ${sql.lit(true)}, ${sql.lit(false)}, ${sql.lit(false)}, ${sql.lit(false)}, 'public', ${sql.lit(now)}, ${sql.lit(now)}
      FROM ${numbersTo(dialect, SEEDED)}`.execute(t.database.db);
  }, 120_000);
  afterAll(() => t.close());

  async function truth(): Promise<Truth[]> {
    const rows = await t.database.db
      .selectFrom('events')
      .select(['id', 'chapter_id', 'player_id'])
      .where('organization_id', '=', org.organizationId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Lists whose deep pages come from the counts, each with its expected ids. */
  async function lists() {
    const events = await truth();
    const ids = (f: (e: Truth) => boolean) => events.filter(f).map((e) => e.id);
    return [
      { url: `${P}/events`, key: 'events', ids: ids(() => true) },
      { url: `${P}/chapters/${a.chapters[0]}/ctas`, key: 'ctas', ids: ids((e) => e.chapter_id === a.chapters[0]) },
      { url: `${P}/players/${a.id}/ctas`, key: 'ctas', ids: ids((e) => e.player_id === a.id) },
      {
        url: `${P}/players/${bRemoved ? a.id : b.id}/ctas?include_defaults=true`,
        key: 'ctas',
        ids: ids((e) => e.player_id === (bRemoved ? a.id : b.id) || e.chapter_id === null),
      },
      { url: `${P}/organizations/${org.organizationId}/events`, key: 'events', ids: ids((e) => e.chapter_id === null), unsummarised: true },
    ];
  }

  /** Deep pages (past the walk the counts are used for) and the pages around a run's edges. */
  async function expectDeepPages() {
    for (const list of await lists()) {
      const pages = Math.ceil(list.ids.length / PER_PAGE);
      const deep = [...new Set([Math.floor(pages / 2), Math.floor(pages / 2) + 1, Math.floor((pages * 2) / 3), pages - 3, pages, pages + 1])];
      for (const page of deep.filter((p) => (p - 1) * PER_PAGE > 2 ** (PAGE_RUN_BITS + 1) || p > pages)) {
        const sep = list.url.includes('?') ? '&' : '?';
        const res = await org.api.get(`${list.url}${sep}per_page=${PER_PAGE}&page=${page}`);
        expect(res.status, res.raw).toBe(200);
        const got = (Array.isArray(res.body) ? res.body : res.body[list.key]).map((e: { id: number }) => e.id);
        expect(got, `${list.url} page ${page}`).toEqual(list.ids.slice((page - 1) * PER_PAGE, page * PER_PAGE));
        if (!list.unsummarised) expect(res.body.summary.count).toBe(list.ids.length);
      }
    }
  }

  /** `event_pages` equals a recount of the events, row for row, with no row left at zero. */
  async function expectCountsExact() {
    const bits = sql.lit(PAGE_RUN_BITS);
    const recount = await sql<{ organization_id: number; scope: string; scope_id: number; bucket: number; n: number }>`
      SELECT organization_id, scope, scope_id, bucket, COUNT(*) AS n FROM (
        SELECT organization_id, 'org' AS scope, 0 AS scope_id, id >> ${bits} AS bucket FROM events
        UNION ALL SELECT organization_id, 'chapter', COALESCE(chapter_id, 0), id >> ${bits} FROM events
        UNION ALL SELECT organization_id, 'player', player_id, id >> ${bits} FROM events WHERE player_id IS NOT NULL
      ) e GROUP BY organization_id, scope, scope_id, bucket ORDER BY 1, 2, 3, 4`.execute(t.database.db);
    // Summed per key: PostgreSQL keeps a key in shards (migration 0035), which may sum to nothing.
    const kept = await t.database.db
      .selectFrom('event_pages')
      .select((eb) => ['organization_id', 'scope', 'scope_id', 'bucket', eb.fn.sum<number>('n').as('n')])
      .groupBy(['organization_id', 'scope', 'scope_id', 'bucket'])
      .orderBy(['organization_id', 'scope', 'scope_id', 'bucket'])
      .execute();
    const plain = (rows: Array<Record<string, unknown>>) => rows.map((r) => ({ ...r, bucket: Number(r.bucket), n: Number(r.n) })).filter((r) => r.n !== 0);
    expect(plain(kept)).toEqual(plain(recount.rows));
    if (t.dialect === 'sqlite') expect(await t.database.db.selectFrom('event_pages').select('n').where('n', '<=', 0).execute()).toEqual([]);
  }

  it('are the events’ own after a bulk insert', { timeout: 120_000 }, async () => {
    await expectCountsExact();
    await expectDeepPages();
  });

  it('stay exact through deletes, moves between chapters and players, defaults made, a bulk delete and a player removed', { timeout: 120_000 }, async () => {
    const before = await truth();
    const onA = before.filter((e) => e.chapter_id === a.chapters[0]);
    // Early in the lists, so that every deep page after them moves.
    for (const e of onA.slice(0, 3)) expect((await org.api.delete(`${P}/ctas/${e.id}`)).status).toBe(200);
    expect((await org.api.patch(`${P}/events/${onA[5].id}`, { chapter_id: b.chapters[0] })).status).toBe(200);
    expect((await org.api.patch(`${P}/events/${onA[6].id}`, { chapter_id: null })).status).toBe(200);
    expect((await org.api.patch(`${P}/events/${onA[7].id}`, { chapter_id: a.chapters[1] })).status).toBe(200);
    // A new one at the end, and a bulk statement over a range in the middle.
    expect(
      (await org.api.post(`${P}/ctas`, { chapter_id: a.chapters[0], second: 0, duration: 5, auto_close: true, width: 300, html: '<p>y</p>' })).status,
    ).toBe(201);
    const middle = before[Math.floor(before.length / 3)].id;
    await t.database.db
      .deleteFrom('events')
      .where('organization_id', '=', org.organizationId)
      .where('id', '>=', middle)
      .where('id', '<', middle + 3000)
      .where('chapter_id', '=', a.chapters[0])
      .execute();
    await expectCountsExact();
    await expectDeepPages();

    expect((await org.api.delete(`${P}/players/${b.id}`)).status).toBe(200);
    bRemoved = true;
    await expectCountsExact();
    const left = await truth();
    expect(left.some((e) => e.player_id === b.id)).toBe(false);
    await expectDeepPages();
  });

  it('a deep page is found through the counts (a wrong count shows in it)', async () => {
    const list = (await lists())[2];
    const page = Math.floor(list.ids.length / PER_PAGE / 2) + 1;
    const url = `${list.url}?per_page=${PER_PAGE}&page=${page}`;
    const first = (await org.api.get(url)).body.ctas.map((e: { id: number }) => e.id);
    expect(first).toEqual(list.ids.slice((page - 1) * PER_PAGE, page * PER_PAGE));
    // One more event counted in the player's first run than it holds: the page found shifts by one.
    // One row of it (of one shard, on PostgreSQL).
    const run = await t.database.db
      .selectFrom('event_pages')
      .select(['bucket', 'shard'])
      .where('organization_id', '=', org.organizationId)
      .where('scope', '=', 'player')
      .where('scope_id', '=', a.id)
      .orderBy('bucket')
      .executeTakeFirstOrThrow();
    const where = (n: number) =>
      t.database.db
        .updateTable('event_pages')
        .set((eb) => ({ n: eb('n', '+', n) }))
        .where('organization_id', '=', org.organizationId)
        .where('scope', '=', 'player')
        .where('scope_id', '=', a.id)
        .where('bucket', '=', run.bucket)
        .where('shard', '=', run.shard)
        .execute();
    await where(1);
    try {
      const shifted = (await org.api.get(url)).body.ctas.map((e: { id: number }) => e.id);
      expect(shifted).toEqual(list.ids.slice((page - 1) * PER_PAGE - 1, page * PER_PAGE - 1));
    } finally {
      await where(-1);
    }
  });
});
