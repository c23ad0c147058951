/**
 * Stored analytics (docs/analytics.md), through the wire on both dialects: the player's reports are
 * kept before they are acknowledged (replays once, bots not at all, opted-out viewers without a
 * visitor id), and `GET /v1/analytics/players/:id` answers the player's figures from them.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_UA, createCta, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import * as m0037 from '../src/db/migrations/0037_identified_by_player.ts';

const P = '/dashboard/v1';
const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

describe.each(dialects)('stored analytics on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  const beacon = (uuid: string, load: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/watch/${uuid}/analytics`,
      headers: { 'user-agent': BROWSER_UA, ...headers },
      payload: { player_load_id: load, visitor_uuid: `visitor-of-${load}`, chapter: 0, ...body },
    });
  const stored = (playerId: number) => t.database.db.selectFrom('analytics_events').selectAll().where('player_id', '=', playerId).orderBy('id').execute();

  it("keeps every report, once, and answers the player's figures from what is kept", async () => {
    const player = await createPlayer(org.api, {}, 2);
    const send = async (load: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
      expect((await beacon(player.uuid, load, body, headers)).statusCode).toBe(204);

    // Load 1 (desktop): plays chapter 0 to the end, watches part of it again, clicks a CTA, passes a gate.
    await send('load-1', { type: 'load', embed_url: 'https://blog.example.com:8443/post?x=1' });
    await send('load-1', { type: 'view', percent_watched: 0 });
    for (const percent of [25, 50, 75, 100, 100]) await send('load-1', { type: 'view', percent_watched: percent });
    const attention = {
      type: 'attention_span',
      buckets: Array(20).fill(1),
      watched: [
        [0, 6],
        [4, 10],
      ],
      played_seconds: 14.5,
    };
    await send('load-1', attention);
    await send('load-1', attention); // a replayed beacon
    const cta = (await createCta(org.api, player.chapters_attributes[0].id)).body;
    await send('load-1', { type: 'cta_impression', event_id: cta.id });
    await send('load-1', { type: 'cta_click', event_id: cta.id });
    await send('load-1', { type: 'cta_click', event_id: cta.id });
    await send('load-1', { type: 'identified_view', email: 'Viewer@Example.com' });
    // Load 2 (the same visitor's phone, Do-Not-Track): plays both chapters a little.
    await send('load-2', { type: 'load' }, { 'user-agent': IPHONE_UA, dnt: '1' });
    await send('load-2', { type: 'view', percent_watched: 0 }, { 'user-agent': IPHONE_UA, dnt: '1' });
    await send('load-2', { type: 'view', percent_watched: 0, chapter: 1 }, { 'user-agent': IPHONE_UA, dnt: '1' });
    await send('load-2', { type: 'attention_span', chapter: 1, buckets: Array(20).fill(0), watched: [[0, 2.5]] }, { 'user-agent': IPHONE_UA, dnt: '1' });
    // Load 3: loaded, never played. A crawler's reports are acknowledged and not kept.
    await send('load-3', { type: 'load' });
    await send('load-4', { type: 'load' }, { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' });
    await send('load-4', { type: 'view', percent_watched: 0 }, { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' });

    // The chapter watched again in the same load: the same stretches, a new report (seq), kept too.
    await send('load-1', { ...attention, seq: 2 });
    const rows = await stored(player.id);
    expect(rows.filter((r) => r.session_id === 'load-4')).toEqual([]);
    expect(rows.filter((r) => r.type === 'view' && r.session_id === 'load-1').map((r) => r.percent)).toEqual([0, 25, 50, 75, 100]);
    const first = rows.find((r) => r.session_id === 'load-1' && r.type === 'load')!;
    expect(first).toMatchObject({
      origin: 'https://blog.example.com:8443',
      device: 'desktop',
      browser: 'Chrome',
      visitor_id: 'visitor-of-load-1',
      organization_id: org.organizationId,
    });
    const phone = rows.filter((r) => r.session_id === 'load-2');
    expect(phone.every((r) => r.visitor_id === null && r.device === 'mobile' && r.browser === 'Safari')).toBe(true);
    const kept = rows.find((r) => r.type === 'attention_span' && r.session_id === 'load-1')!;
    expect(JSON.parse(kept.watched!)).toEqual([[0, 10]]);
    expect(Number(kept.watched_seconds)).toBe(14.5);
    expect(rows.filter((r) => r.type === 'attention_span')).toHaveLength(3);
    expect(rows.find((r) => r.type === 'identified_view')!.email).toBe('viewer@example.com');
    expect(rows.filter((r) => r.type === 'cta_click')).toHaveLength(1);

    const summary = await org.api.get(`${P}/analytics/players/${player.id}`);
    expect(summary.status, summary.raw).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(summary.body).toEqual({
      player_id: player.id,
      from: new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10),
      to: today,
      loads: 3,
      plays: 2,
      views: 3,
      unique_viewers: 2,
      play_rate: 0.6667,
      completion_rate: 0.3333,
      average_view_seconds: 10.5,
      total_watch_seconds: 31.5,
      identified_viewers: 1,
      cta_clicks: 1,
    });
    expect((await org.api.get(`${P}/analytics/players/uuid=${player.uuid}`)).body).toEqual(summary.body);
    // A period without the reports.
    const before = await org.api.get(`${P}/analytics/players/${player.id}?from=2020-01-01&to=2020-01-31`);
    expect(before.body).toMatchObject({ from: '2020-01-01', to: '2020-01-31', loads: 0, plays: 0, views: 0, play_rate: 0, total_watch_seconds: 0 });
  });

  it('answers a report that misses what its type needs with 422, and keeps nothing of it', async () => {
    const player = await createPlayer(org.api);
    for (const body of [{ type: 'cta_click' }, { type: 'view' }, { type: 'attention_span', watched: [[0, 1]] }, { type: 'load', watched: [[1]] }]) {
      const res = await beacon(player.uuid, 'load-x', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
    }
    expect(await stored(player.id)).toEqual([]);
  });

  it("another organization's player is not found; the period is checked", async () => {
    const player = await createPlayer(org.api);
    const other = await createOrg(t);
    expect((await other.api.get(`${P}/analytics/players/${player.id}`)).status).toBe(404);
    expect((await other.api.get(`${P}/analytics/players/uuid=${player.uuid}`)).status).toBe(404);
    for (const query of ['from=2026-02-30', 'to=yesterday', 'from=2026-05-02&to=2026-05-01', 'from=2000-01-01&to=2026-01-01']) {
      const res = await org.api.get(`${P}/analytics/players/${player.id}?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.errors?.[0]?.field ?? res.raw).toMatch(/from|to/);
    }
  });

  it('timeseries: one row per interval of the period, zeros included; the hours add up to the day', async () => {
    const player = await createPlayer(org.api);
    for (const load of ['s1', 's2']) {
      await beacon(player.uuid, load, { type: 'load' });
      await beacon(player.uuid, load, { type: 'view', percent_watched: 0 });
    }
    await beacon(player.uuid, 's1', { type: 'attention_span', buckets: Array(20).fill(1), watched: [[0, 3]], played_seconds: 3 });
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const days = await org.api.get(`${P}/analytics/players/${player.id}/timeseries?from=${yesterday}&to=${today}`);
    expect(days.status, days.raw).toBe(200);
    expect(days.body).toMatchObject({ player_id: player.id, interval: 'day', from: yesterday, to: today });
    expect(days.body.rows).toEqual([
      { start: `${yesterday}T00:00:00.000Z`, loads: 0, plays: 0, views: 0, unique_viewers: 0, total_watch_seconds: 0, identified_viewers: 0, cta_clicks: 0 },
      { start: `${today}T00:00:00.000Z`, loads: 2, plays: 2, views: 2, unique_viewers: 2, total_watch_seconds: 3, identified_viewers: 0, cta_clicks: 0 },
    ]);
    const hours = (await org.api.get(`${P}/analytics/players/${player.id}/timeseries?from=${today}&to=${today}&interval=hour`)).body.rows;
    expect(hours).toHaveLength(24);
    expect(hours.reduce((sum: number, r: { plays: number }) => sum + r.plays, 0)).toBe(2);
    const months = (await org.api.get(`${P}/analytics/players/uuid=${player.uuid}/timeseries?from=${today}&to=${today}&interval=month`)).body;
    expect(months.rows).toEqual([expect.objectContaining({ start: `${today.slice(0, 7)}-01T00:00:00.000Z`, plays: 2 })]);
    const weeks = (await org.api.get(`${P}/analytics/players/${player.id}/timeseries?from=${today}&to=${today}&interval=week`)).body.rows;
    expect(weeks).toHaveLength(1);
    expect(new Date(weeks[0].start).getUTCDay()).toBe(1); // a Monday
    expect(weeks[0].plays).toBe(2);
    const tooLong = await org.api.get(`${P}/analytics/players/${player.id}/timeseries?from=2026-01-01&to=2026-03-01&interval=hour`);
    expect(tooLong.status).toBe(422);
    expect((await org.api.get(`${P}/analytics/players/${player.id}/timeseries?interval=minute`)).status).toBe(422);
  });

  it("a CTA's impressions, clicks and click-through rate; another organization's CTA is not found", async () => {
    const player = await createPlayer(org.api);
    const cta = await createCta(org.api, player.chapters_attributes[0].id);
    expect(cta.status, cta.raw).toBe(201);
    for (const load of ['c1', 'c2', 'c3', 'c4']) await beacon(player.uuid, load, { type: 'cta_impression', event_id: cta.body.id });
    await beacon(player.uuid, 'c2', { type: 'cta_click', event_id: cta.body.id });
    const res = await org.api.get(`${P}/analytics/ctas/${cta.body.id}`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ cta_id: cta.body.id, impressions: 4, clicks: 1, click_through_rate: 0.25 });
    const other = await createOrg(t);
    expect((await other.api.get(`${P}/analytics/ctas/${cta.body.id}`)).status).toBe(404);
    // Reports about a CTA this player does not show (another player's, another organization's) are refused and count nothing.
    const elsewhere = await createPlayer(org.api);
    expect((await beacon(elsewhere.uuid, 'c9', { type: 'cta_click', event_id: cta.body.id })).statusCode).toBe(422);
    const theirs = await createPlayer(other.api);
    expect((await beacon(theirs.uuid, 'c9', { type: 'cta_click', event_id: cta.body.id })).statusCode).toBe(422);
    expect((await org.api.get(`${P}/analytics/ctas/${cta.body.id}`)).body).toMatchObject({ impressions: 4, clicks: 1 });
  });

  it('retention: the share of views still watching at each second, and where they left', async () => {
    const player = await createPlayer(org.api);
    const videoId = player.chapters_attributes[0].video_id as number;
    const watch = (load: string, watched: number[][]) =>
      beacon(player.uuid, load, { type: 'attention_span', buckets: Array(20).fill(1), watched, played_seconds: 1 });
    await beacon(player.uuid, 'r1', { type: 'view', percent_watched: 0 });
    await watch('r1', [[0, 10]]);
    await beacon(player.uuid, 'r2', { type: 'view', percent_watched: 0 });
    await watch('r2', [[0, 4]]);
    // A viewer who watched the start, skipped ahead, and watched again later (two reports of one load).
    await beacon(player.uuid, 'r3', { type: 'view', percent_watched: 0 });
    await watch('r3', [[0, 2]]);
    await watch('r3', [[8, 10]]);
    const res = await org.api.get(`${P}/analytics/videos/${videoId}/retention`);
    expect(res.status, res.raw).toBe(200);
    // The video was never processed (no length): the curve runs to the end of what was watched.
    expect(res.body).toMatchObject({ video_id: videoId, duration: 10, views: 3, interval_seconds: 1 });
    expect(res.body.points.map((p: { share: number }) => p.share)).toEqual([1, 1, 0.6667, 0.6667, 0.3333, 0.3333, 0.3333, 0.3333, 0.6667, 0.6667]);
    expect(res.body.drop_offs).toEqual([
      { second: 2, share_lost: 0.3333 },
      { second: 4, share_lost: 0.3333 },
    ]);
    // Many stretches (as many as a report may carry, from many loads) are a curve, never an error.
    const many = Array.from({ length: 500 }, (_, i) => [i * 0.02, i * 0.02 + 0.01]);
    for (let i = 0; i < 40; i++) await watch(`m${i}`, many);
    const busy = await org.api.get(`${P}/analytics/videos/${videoId}/retention`);
    expect(busy.status, busy.raw.slice(0, 200)).toBe(200);
    expect(busy.body.views).toBe(43);
    const other = await createOrg(t);
    expect((await other.api.get(`${P}/analytics/videos/${videoId}/retention`)).status).toBe(404);
  });

  it("the organization's summary: its totals, and its most viewed players first; nothing of another organization", async () => {
    const own = await createOrg(t);
    const a = await createPlayer(own.api);
    const b = await createPlayer(own.api);
    for (const load of ['o1', 'o2']) await beacon(b.uuid, load, { type: 'view', percent_watched: 0 });
    await beacon(a.uuid, 'o3', { type: 'view', percent_watched: 0 });
    // What the recurring analytics.rollup job does (test/analytics-rollups.test.ts runs it as a job).
    await t.services.analyticsRollups.catchUp();
    const res = await own.api.get(`${P}/analytics/summary`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ plays: 3, views: 3, unique_viewers: 3 });
    expect(res.body.top_players.map((p: { player_id: number; views: number }) => [p.player_id, p.views])).toEqual([
      [b.id, 2],
      [a.id, 1],
    ]);
    expect((await (await createOrg(t)).api.get(`${P}/analytics/summary`)).body).toMatchObject({ plays: 0, top_players: [] });
  });

  it('identified viewers: the latest first, paged, with what each watched per player; one address; as CSV', async () => {
    const own = await createOrg(t);
    const a = await createPlayer(own.api, { name: 'Alpha' });
    const b = await createPlayer(own.api, { name: 'Beta' });
    const identify = async (player: { uuid: string }, load: string, email: string, played: number) => {
      await beacon(player.uuid, load, { type: 'view', percent_watched: 0 });
      await beacon(player.uuid, load, { type: 'view', percent_watched: 25 });
      await beacon(player.uuid, load, { type: 'attention_span', buckets: Array(20).fill(1), watched: [[0, played]], played_seconds: played });
      await beacon(player.uuid, load, { type: 'identified_view', email });
    };
    await identify(a, 'v1', 'ann@example.com', 12);
    await identify(b, 'v2', 'ann@example.com', 8);
    await identify(a, 'v3', 'Bob@Example.com', 5);
    await beacon(a.uuid, 'v4', { type: 'view', percent_watched: 0 }); // anonymous: not listed

    const all = await own.api.get(`${P}/analytics/viewers?per_page=1`);
    expect(all.status, all.raw).toBe(200);
    expect(all.body.summary).toEqual({ page: 1, per_page: 1, count: 2 });
    expect(all.body.viewers).toEqual([expect.objectContaining({ email: 'bob@example.com', loads: 1, total_watch_seconds: 5 })]);
    const second = (await own.api.get(`${P}/analytics/viewers?per_page=1&page=2`)).body.viewers;
    expect(second).toEqual([
      expect.objectContaining({
        email: 'ann@example.com',
        loads: 2,
        total_watch_seconds: 20,
        players: [
          { player_id: a.id, uuid: a.uuid, name: 'Alpha', views: 1, total_watch_seconds: 12, furthest_percent: 25 },
          { player_id: b.id, uuid: b.uuid, name: 'Beta', views: 1, total_watch_seconds: 8, furthest_percent: 25 },
        ],
      }),
    ]);
    expect(second[0].last_seen).toBeGreaterThanOrEqual(second[0].first_seen);
    const one = (await own.api.get(`${P}/analytics/viewers?email=ANN@example.com`)).body;
    expect(one.viewers.map((v: { email: string }) => v.email)).toEqual(['ann@example.com']);
    const ofB = (await own.api.get(`${P}/analytics/players/${b.id}/viewers`)).body;
    expect(ofB.viewers).toEqual([
      expect.objectContaining({ email: 'ann@example.com', loads: 1, total_watch_seconds: 8, players: [expect.objectContaining({ player_id: b.id })] }),
    ]);
    const csv = await own.api.get(`${P}/analytics/viewers`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.raw.split('\n')[0]).toContain('email');
    const series = await own.api.get(`${P}/analytics/players/${a.id}/timeseries`, { accept: 'text/csv' });
    expect(series.status).toBe(200);
    expect(series.raw.split('\n')[0]).toContain('plays');
    // Nothing of another organization.
    expect((await org.api.get(`${P}/analytics/viewers?email=ann@example.com`)).body.viewers).toEqual([]);
    expect((await org.api.get(`${P}/analytics/players/${b.id}/viewers`)).status).toBe(404);
    expect((await own.api.get(`${P}/analytics/viewers?email=not-an-address`)).status).toBe(422);
  });

  it("a browser Bowser does not know is 'Other' (its catch-all names an agent after its first word, or '')", async () => {
    const player = await createPlayer(org.api);
    for (const [load, ua] of [
      ['ua-1', 'FooBar/2.0 something'],
      ['ua-2', '/1.0 (x)'],
      ['ua-3', BROWSER_UA],
    ]) {
      expect((await beacon(player.uuid, load, { type: 'view', percent_watched: 0 }, { 'user-agent': ua })).statusCode).toBe(204);
    }
    expect((await stored(player.id)).map((r) => r.browser)).toEqual(['Other', 'Other', 'Chrome']);
  });

  it("a player's identified viewers: those given at it, the latest there first (not at another player), each with its loads there", async () => {
    const own = await createOrg(t);
    const [a, b] = [await createPlayer(own.api), await createPlayer(own.api)];
    const identify = async (player: { uuid: string }, load: string, email: string) => {
      expect((await beacon(player.uuid, load, { type: 'view', percent_watched: 0 })).statusCode).toBe(204);
      expect((await beacon(player.uuid, load, { type: 'identified_view', email })).statusCode).toBe(204);
    };
    // Ann at A, then Bob at A, then Ann at B: at A, Bob is the latest; in the organization, Ann.
    await identify(a, 'w1', 'ann@example.com');
    await identify(a, 'w2', 'bob@example.com');
    await identify(b, 'w3', 'ann@example.com');
    const emails = (body: { viewers: Array<{ email: string }> }) => body.viewers.map((v) => v.email);
    const first = (await own.api.get(`${P}/analytics/players/${a.id}/viewers?per_page=1`)).body;
    expect(first.summary).toEqual({ page: 1, per_page: 1, count: 2 });
    expect(first.viewers).toEqual([expect.objectContaining({ email: 'bob@example.com', loads: 1 })]);
    const second = (await own.api.get(`${P}/analytics/players/${a.id}/viewers?per_page=1&page=2`)).body;
    expect(second.viewers).toEqual([expect.objectContaining({ email: 'ann@example.com', loads: 1, players: [expect.objectContaining({ player_id: a.id })] })]);
    expect(second.viewers[0].last_seen).toBeLessThanOrEqual(first.viewers[0].last_seen);
    expect(emails((await own.api.get(`${P}/analytics/players/${b.id}/viewers`)).body)).toEqual(['ann@example.com']);
    const all = (await own.api.get(`${P}/analytics/viewers`)).body;
    expect(emails(all)).toEqual(['ann@example.com', 'bob@example.com']);
    expect(all.viewers[0].loads).toBe(2);
    // What ingest keeps for it: the organization's rows, and each player's.
    const ofOrganization = await t.database.db
      .selectFrom('analytics_identified')
      .select('email')
      .where('organization_id', '=', own.organizationId)
      .orderBy('email')
      .execute();
    expect(ofOrganization.map((r) => r.email)).toEqual(['ann@example.com', 'bob@example.com']);
    const ofPlayers = await t.database.db
      .selectFrom('analytics_identified_players')
      .select(['player_id', 'email'])
      .where('organization_id', '=', own.organizationId)
      .orderBy('player_id')
      .orderBy('email')
      .execute();
    expect(ofPlayers).toEqual([
      { player_id: a.id, email: 'ann@example.com' },
      { player_id: a.id, email: 'bob@example.com' },
      { player_id: b.id, email: 'ann@example.com' },
    ]);
    // The list is those rows (the reports only add the page's figures): without Bob's row at A, A lists Ann alone.
    await t.database.db.deleteFrom('analytics_identified_players').where('player_id', '=', a.id).where('email', '=', 'bob@example.com').execute();
    const after = (await own.api.get(`${P}/analytics/players/${a.id}/viewers`)).body;
    expect([emails(after), after.summary.count]).toEqual([['ann@example.com'], 1]);
  });

  it("migration 0037: the players' rows of the identified are read from the stored reports", async () => {
    const own = await createTestApp(dialect);
    try {
      const o = await createOrg(own);
      const [a, b] = [await createPlayer(o.api), await createPlayer(o.api)];
      await m0037.down(own.database.db);
      const report = (playerId: number, session: string, email: string | null, createdAt: number) => ({
        organization_id: o.organizationId,
        player_id: playerId,
        chapter: 0,
        type: email === null ? 'view' : 'identified_view',
        email,
        session_id: session,
        device: 'desktop',
        browser: 'Chrome',
        dedup_key: `m37:${session}:${email}`,
        created_at: createdAt,
      });
      await own.database.db
        .insertInto('analytics_events')
        .values([
          report(a.id, 's1', 'ann@example.com', 1_000),
          report(a.id, 's2', 'ann@example.com', 3_000),
          report(b.id, 's3', 'ann@example.com', 2_000),
          report(b.id, 's4', null, 4_000),
        ])
        .execute();
      await m0037.up(own.database.db);
      const rows = await own.database.db
        .selectFrom('analytics_identified_players')
        .select(['organization_id', 'player_id', 'email', 'last_seen'])
        .orderBy('player_id')
        .execute();
      expect(rows.map((r) => ({ ...r, last_seen: Number(r.last_seen) }))).toEqual([
        { organization_id: o.organizationId, player_id: a.id, email: 'ann@example.com', last_seen: 3_000 },
        { organization_id: o.organizationId, player_id: b.id, email: 'ann@example.com', last_seen: 2_000 },
      ]);
    } finally {
      await own.close();
    }
  });
});

// A real country database in the MaxMind format (ip-location-db, CC0), as GEOIP_DATABASE names one.
const COUNTRY_DB = fileURLToPath(import.meta.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb'));

/** A new load's start of playback, reported from `remoteAddress` (answered 204). */
async function playFrom(t: TestApp, uuid: string, load: string, remoteAddress: string, ua = BROWSER_UA) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/watch/${uuid}/analytics`,
    remoteAddress,
    headers: { 'user-agent': ua },
    payload: { type: 'view', percent_watched: 0, player_load_id: load, visitor_uuid: `v-${load}`, chapter: 0 },
  });
  expect(res.statusCode).toBe(204);
}

describe.each(dialects)('countries, devices and browsers of the views on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect, { GEOIP_DATABASE: COUNTRY_DB });
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  it('keeps the country of the address (from GEOIP_DATABASE) and nothing else of it; breaks the views down by country, device and browser', async () => {
    const player = await createPlayer(org.api);
    const play = (load: string, remoteAddress: string, ua = BROWSER_UA) => playFrom(t, player.uuid, load, remoteAddress, ua);
    await play('us-1', '8.8.8.8');
    await play('us-2', '8.8.4.4', IPHONE_UA);
    await play('gb-1', '81.2.69.142');
    await play('gb-2', '::ffff:81.2.69.142'); // an IPv4 viewer on a dual-stack socket
    await play('ie-1', '2a00:1450:4001::1', IPHONE_UA);
    await play('lan', '127.0.0.1'); // no country

    const rows = await t.database.db.selectFrom('analytics_events').select(['session_id', 'country']).where('player_id', '=', player.id).execute();
    expect(Object.fromEntries(rows.map((r) => [r.session_id, r.country]))).toEqual({
      'us-1': 'US',
      'us-2': 'US',
      'gb-1': 'GB',
      'gb-2': 'GB',
      'ie-1': 'IE',
      lan: null,
    });
    // Nothing of the address itself is kept, in any column.
    const everything = JSON.stringify(await t.database.db.selectFrom('analytics_events').selectAll().where('player_id', '=', player.id).execute());
    for (const address of ['8.8.8.8', '8.8.4.4', '81.2.69.142', '2a00:1450', '127.0.0.1']) expect(everything).not.toContain(address);

    const by = async (what: string) => {
      const res = await org.api.get(`${P}/analytics/players/${player.id}/breakdown?by=${what}`);
      expect(res.status, res.raw).toBe(200);
      return res.body;
    };
    const countries = await by('country');
    expect(countries).toMatchObject({ player_id: player.id, by: 'country' });
    // Most views first; among equals by code, the unknown last.
    expect(countries.rows).toEqual([
      { value: 'GB', views: 2, unique_viewers: 2 },
      { value: 'US', views: 2, unique_viewers: 2 },
      { value: 'IE', views: 1, unique_viewers: 1 },
      { value: null, views: 1, unique_viewers: 1 },
    ]);
    expect((await by('device')).rows).toEqual([
      { value: 'desktop', views: 4, unique_viewers: 4 },
      { value: 'mobile', views: 2, unique_viewers: 2 },
    ]);
    expect((await by('browser')).rows.map((r: { value: string }) => r.value)).toEqual(['Chrome', 'Safari']);
    expect((await org.api.get(`${P}/analytics/players/uuid=${player.uuid}/breakdown?by=device`)).body.rows).toHaveLength(2);
    const csv = await org.api.get(`${P}/analytics/players/${player.id}/breakdown?by=country`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.raw.split('\n')[0]).toContain('unique_viewers');
    // Bad input is a 4xx; another organization's player is not found.
    expect((await org.api.get(`${P}/analytics/players/${player.id}/breakdown?by=planet`)).status).toBe(422);
    expect((await org.api.get(`${P}/analytics/players/${player.id}/breakdown`)).status).toBe(422);
    const other = await createOrg(t);
    expect((await other.api.get(`${P}/analytics/players/${player.id}/breakdown?by=country`)).status).toBe(404);
  });
});

// Whatever the database: the lookup is opened before the server starts.
describe('GEOIP_DATABASE', () => {
  it('with an IPv4-only database, an IPv6 viewer has no country (not whatever the IPv4 tree answers)', async () => {
    const t = await createTestApp('sqlite', { GEOIP_DATABASE: COUNTRY_DB.replace(/\.mmdb$/, '-ipv4.mmdb') });
    try {
      const org = await createOrg(t);
      const player = await createPlayer(org.api);
      await playFrom(t, player.uuid, 'v4', '8.8.8.8');
      await playFrom(t, player.uuid, 'v6', '2a00:1450:4001::1');
      const rows = await t.database.db.selectFrom('analytics_events').select(['session_id', 'country']).where('player_id', '=', player.id).execute();
      expect(Object.fromEntries(rows.map((r) => [r.session_id, r.country]))).toEqual({ v4: 'US', v6: null });
    } finally {
      await t.close();
    }
  });

  it('refuses to start with a GEOIP_DATABASE that cannot be read or is not a country database', async () => {
    await expect(createTestApp('sqlite', { GEOIP_DATABASE: '/nonexistent/GeoLite2-Country.mmdb' })).rejects.toThrow(/GEOIP_DATABASE: cannot read/);
    await expect(createTestApp('sqlite', { GEOIP_DATABASE: fileURLToPath(import.meta.url) })).rejects.toThrow(/GEOIP_DATABASE: .* is not a MaxMind database/);
  });
});
