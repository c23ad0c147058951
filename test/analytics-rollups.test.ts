/**
 * The daily rollups of the stored reports (docs/analytics.md, "Rollups"), on both dialects: the
 * organization's summary answers from them once the rollup job has run, and equals what the players'
 * own figures (read from the raw reports) add up to; the job counts every report once, whatever the
 * number of runs at once; the retention sweep removes raw reports only once they are rolled up, and
 * the organization's figures stay.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as m0036 from '../src/db/migrations/0036_player_day_sketches.ts';
import * as m0038 from '../src/db/migrations/0038_cta_days.ts';
import * as m0039 from '../src/db/migrations/0039_breakdown_days.ts';
import * as m0040 from '../src/db/migrations/0040_player_hours.ts';
import * as m0041 from '../src/db/migrations/0041_retention_days.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { RollupRepository } from '../src/modules/analytics/rollup.repository.ts';
import { RollupService } from '../src/modules/analytics/rollup.service.ts';
import { RollupThread } from '../src/modules/analytics/rollup-thread.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { BROWSER_UA, createCta, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const P = '/dashboard/v1';
const DAY_MS = 86_400_000;

describe.each(dialects)('analytics rollups on %s', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(dialect, { ANALYTICS_ROLLUP_SECONDS: '1' });
  });
  afterAll(() => t.close());

  const beacon = async (uuid: string, load: string, body: Record<string, unknown>, visitor = `visitor-of-${load}`) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/watch/${uuid}/analytics`,
      headers: { 'user-agent': BROWSER_UA },
      payload: { player_load_id: load, visitor_uuid: visitor, chapter: 0, ...body },
    });
    expect(res.statusCode, res.body).toBe(204);
  };
  const summaryOf = async (org: OrgContext, query = '') => {
    const res = await org.api.get(`${P}/analytics/summary${query}`);
    expect(res.status, res.raw).toBe(200);
    return res.body;
  };
  const rollUp = () => t.services.analyticsRollups.catchUp();
  /**
   * Three subjects' reports in two halves: `rolled`'s rolled up entirely, `half`'s first half only,
   * `fresh`'s not at all; each checked then (after `between`), and again once everything is rolled up.
   */
  const inThreeStates = async <S>(
    { rolled, half, fresh }: { rolled: S; half: S; fresh: S },
    store: (subject: S, which: 'first' | 'second') => Promise<unknown>,
    check: (subject: S) => Promise<void>,
    between?: () => Promise<void>,
  ) => {
    await store(rolled, 'first');
    await store(rolled, 'second');
    await store(half, 'first');
    await rollUp();
    await store(half, 'second');
    await store(fresh, 'first');
    await store(fresh, 'second');
    for (const subject of [rolled, half, fresh]) await check(subject);
    await between?.();
    await rollUp();
    for (const subject of [rolled, half, fresh]) await check(subject);
  };

  it("the organization's summary answers from the rollups, once they have run; plays count loads, not chapters", async () => {
    const org = await createOrg(t);
    const a = await createPlayer(org.api, {}, 2);
    const b = await createPlayer(org.api);
    await beacon(a.uuid, 'r1', { type: 'load' });
    await beacon(a.uuid, 'r1', { type: 'view', percent_watched: 0 });
    await beacon(a.uuid, 'r1', { type: 'view', percent_watched: 0, chapter: 1 });
    await beacon(a.uuid, 'r1', { type: 'view', percent_watched: 100, chapter: 1 });
    await beacon(a.uuid, 'r1', { type: 'attention_span', buckets: Array(20).fill(1), watched: [[0, 7.5]], played_seconds: 7.5 });
    await beacon(a.uuid, 'r1', { type: 'identified_view', email: 'Ann@Example.com' });
    await beacon(b.uuid, 'r2', { type: 'load' }, 'visitor-of-r1');
    await beacon(b.uuid, 'r2', { type: 'view', percent_watched: 0 }, 'visitor-of-r1');
    await beacon(b.uuid, 'r2', { type: 'identified_view', email: 'ann@example.com' }, 'visitor-of-r1');
    await beacon(b.uuid, 'r3', { type: 'view', percent_watched: 0 });

    expect(await summaryOf(org)).toMatchObject({ loads: 0, views: 0, top_players: [] });
    await rollUp();
    const summary = await summaryOf(org);
    expect(summary).toMatchObject({
      loads: 2,
      plays: 3,
      views: 4,
      unique_viewers: 2,
      play_rate: 1.5,
      completion_rate: 0.25,
      total_watch_seconds: 7.5,
      identified_viewers: 1,
    });
    expect(summary.top_players.map((p: { player_id: number; views: number }) => [p.player_id, p.views])).toEqual([
      [a.id, 2],
      [b.id, 2],
    ]);
    // A second run adds nothing; another organization sees nothing of it.
    await rollUp();
    expect(await summaryOf(org)).toEqual(summary);
    expect(await summaryOf(await createOrg(t))).toMatchObject({ loads: 0, views: 0, unique_viewers: 0, top_players: [] });
    // A period without those days.
    expect(await summaryOf(org, '?from=2020-01-01&to=2020-01-31')).toMatchObject({ views: 0, top_players: [] });
  });

  it('counts what was sent, for a player and for the organization, for any reports rolled up in any number of runs, some at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            player: fc.nat(2),
            load: fc.nat(5),
            visitor: fc.nat(3),
            kind: fc.constantFrom('load', 'start', 'end', 'identified', 'watch', 'impression', 'click'),
            chapter: fc.nat(1),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        fc.integer({ min: 1, max: 4 }),
        async (reports, runs) => {
          const org = await createOrg(t);
          const players = [await createPlayer(org.api, {}, 2), await createPlayer(org.api, {}, 2), await createPlayer(org.api, {}, 2)];
          const ctas = await Promise.all(players.map(async (p) => (await createCta(org.api, p.chapters_attributes[0].id)).body.id as number));
          let rolled = Promise.resolve();
          for (const [i, r] of reports.entries()) {
            const player = players[r.player];
            const load = `${player.uuid}-${r.load}`;
            const body =
              r.kind === 'load'
                ? { type: 'load' }
                : r.kind === 'start'
                  ? { type: 'view', percent_watched: 0, chapter: r.chapter }
                  : r.kind === 'end'
                    ? { type: 'view', percent_watched: 100, chapter: r.chapter }
                    : r.kind === 'identified'
                      ? { type: 'identified_view', email: `viewer-${r.visitor}@example.com` }
                      : r.kind === 'impression' || r.kind === 'click'
                        ? { type: r.kind === 'impression' ? 'cta_impression' : 'cta_click', event_id: ctas[r.player] }
                        : { type: 'attention_span', buckets: Array(20).fill(1), watched: [[0, 1 + i]], played_seconds: 1 + i, seq: i };
            await beacon(player.uuid, load, body, `visitor-${r.visitor}`);
            // Rollups run now and then meanwhile, several at once.
            if (i % Math.ceil(reports.length / runs) === 0) rolled = Promise.all([rolled, rollUp(), rollUp()]).then(() => undefined);
          }
          await rolled;
          await rollUp();
          const own = await Promise.all(players.map(async (p) => (await org.api.get(`${P}/analytics/players/${p.id}`)).body));
          const summary = await summaryOf(org);
          // What was sent, counted by hand: a report sent again (same load, kind and chapter) is a replay,
          // kept once with its first visitor; a load plays once, whichever chapter starts first.
          const model = players.map((_, p) => {
            const mine = reports.map((r, i) => ({ ...r, i })).filter((r) => r.player === p);
            const starts = new Map<string, number>();
            for (const r of mine) if (r.kind === 'start' && !starts.has(`${r.load}-${r.chapter}`)) starts.set(`${r.load}-${r.chapter}`, r.visitor);
            return {
              loads: new Set(mine.filter((r) => r.kind === 'load').map((r) => r.load)).size,
              plays: new Set(mine.filter((r) => r.kind === 'start').map((r) => r.load)).size,
              views: starts.size,
              total_watch_seconds: mine.filter((r) => r.kind === 'watch').reduce((sum, r) => sum + 1 + r.i, 0),
              viewers: new Set(starts.values()),
              emails: new Set(mine.filter((r) => r.kind === 'identified').map((r) => r.visitor)),
              // Once per load each.
              impressions: new Set(mine.filter((r) => r.kind === 'impression').map((r) => r.load)).size,
              clicks: new Set(mine.filter((r) => r.kind === 'click').map((r) => r.load)).size,
            };
          });
          // Each player's CTA, and its breakdown by device (every beacon comes from one desktop browser).
          for (const [p, m] of model.entries()) {
            expect((await org.api.get(`${P}/analytics/ctas/${ctas[p]}`)).body).toMatchObject({ impressions: m.impressions, clicks: m.clicks });
            const byDevice = (await org.api.get(`${P}/analytics/players/${players[p].id}/breakdown?by=device`)).body.rows;
            expect(byDevice).toEqual(m.views === 0 ? [] : [{ value: 'desktop', views: m.views, unique_viewers: m.viewers.size }]);
            // Its videos' retention: each view (a load's chapter) once, covering what its reports watched.
            const mine = reports.map((r, i) => ({ ...r, i })).filter((r) => r.player === p);
            const videoOf = (chapter: number) => players[p].chapters_attributes[chapter].video_id as number;
            for (const video of new Set([videoOf(0), videoOf(1)])) {
              const ends = new Map<string, number>();
              for (const r of mine) {
                const chapter = r.kind === 'watch' ? 0 : r.chapter;
                if ((r.kind === 'start' || r.kind === 'watch') && videoOf(chapter) === video) {
                  const view = `${r.load}-${chapter}`;
                  ends.set(view, Math.max(ends.get(view) ?? 0, r.kind === 'watch' ? 1 + r.i : 0));
                }
              }
              const curve = (await org.api.get(`${P}/analytics/videos/${video}/retention`)).body;
              const longest = Math.max(0, ...ends.values());
              expect(curve, `video ${video}`).toMatchObject({ views: ends.size, duration: longest });
              const watching = (second: number) => [...ends.values()].filter((end) => second + 0.5 < end).length;
              expect(curve.points.map((point: { share: number }) => point.share)).toEqual(
                Array.from({ length: Math.max(1, longest) }, (_, second) =>
                  ends.size === 0 ? 0 : Math.round((watching(second) / ends.size) * 10_000) / 10_000,
                ),
              );
            }
            // Its hours add up to what was sent.
            const hourly = (await org.api.get(`${P}/analytics/players/${players[p].id}/timeseries?interval=hour`)).body.rows;
            for (const figure of ['loads', 'plays', 'views', 'total_watch_seconds'] as const) {
              expect(
                hourly.reduce((sum: number, r: Record<string, number>) => sum + r[figure], 0),
                `hourly ${figure}`,
              ).toBeCloseTo(m[figure], 5);
            }
          }
          for (const [p, m] of model.entries()) {
            expect(own[p]).toMatchObject({
              loads: m.loads,
              plays: m.plays,
              views: m.views,
              total_watch_seconds: m.total_watch_seconds,
              unique_viewers: m.viewers.size,
              identified_viewers: m.emails.size,
            });
          }
          for (const figure of ['loads', 'plays', 'views', 'total_watch_seconds'] as const) {
            expect(summary[figure], figure).toBeCloseTo(
              model.reduce((sum, m) => sum + m[figure], 0),
              5,
            );
          }
          expect(summary.unique_viewers).toBe(new Set(model.flatMap((m) => [...m.viewers])).size);
          expect(summary.identified_viewers).toBe(new Set(reports.filter((r) => r.kind === 'identified').map((r) => r.visitor)).size);
        },
      ),
      { numRuns: 8 },
    );
  });

  it("a player's figures and series are read from its rolled-up days and hours with its newer reports added: the same before, during and after a rollup", async () => {
    const org = await createOrg(t);
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const period = `?from=${iso(today - 2 * DAY_MS)}&to=${iso(today)}`;
    const at = (day: number, s: number) => today + day * DAY_MS + s * 1000;
    const hourOf = (day: number, s: number) => new Date(Math.floor(at(day, s) / 3_600_000) * 3_600_000).toISOString();
    let n = 0;
    /** Reports of three days, with their times: s1 starts chapter 0 a second before midnight and chapter 1 just after. */
    const store = (player: { id: number }, which: 'first' | 'second') => {
      const rows: Array<[string, string, string, number, Record<string, unknown>]> = [
        // [session, visitor, type, at, extra]
        ['s1', 'v1', 'load', at(-2, 86_000), {}],
        ['s1', 'v1', 'view', at(-2, 86_399), { percent: 0 }],
        ['s1', 'v1', 'view', at(-1, 1), { percent: 0, chapter: 1 }],
        ['s1', 'v1', 'attention_span', at(-1, 20), { watched_seconds: 10 }],
        ['s2', 'v2', 'load', at(-1, 100), {}],
        ['s2', 'v2', 'view', at(-1, 101), { percent: 0 }],
        ['s2', 'v2', 'view', at(-1, 200), { percent: 100 }],
        ['s2', 'v2', 'identified_view', at(-1, 150), { email: 'e1@example.com' }],
        ['s3', 'v1', 'load', at(0, 1), {}],
        ['s3', 'v1', 'view', at(0, 2), { percent: 0 }],
        ['s3', 'v1', 'identified_view', at(0, 3), { email: 'e1@example.com' }],
        ['s3', 'v1', 'cta_click', at(0, 4), { event_id: 1 }],
      ];
      const half = which === 'first' ? rows.slice(0, 6) : rows.slice(6);
      return t.database.db
        .insertInto('analytics_events')
        .values(
          half.map(([session, visitor, type, created_at, extra]) => ({
            organization_id: org.organizationId,
            player_id: player.id,
            chapter: 0,
            type,
            visitor_id: visitor,
            session_id: `${player.id}-${session}`,
            dedup_key: `rolled-${player.id}-${++n}`,
            device: 'desktop',
            browser: 'Chrome',
            created_at,
            ...extra,
          })),
        )
        .execute();
    };
    const expected = { loads: 3, plays: 3, views: 4, unique_viewers: 2, completion_rate: 0.25, total_watch_seconds: 10, identified_viewers: 1, cta_clicks: 1 };
    // Per day: s1's chapter 1 is a view of the day after, not a play (a load plays once, on the day it first started).
    const days = [
      { loads: 1, plays: 1, views: 1, unique_viewers: 1, total_watch_seconds: 0, identified_viewers: 0, cta_clicks: 0 },
      { loads: 1, plays: 1, views: 2, unique_viewers: 2, total_watch_seconds: 10, identified_viewers: 1, cta_clicks: 0 },
      { loads: 1, plays: 1, views: 1, unique_viewers: 1, total_watch_seconds: 0, identified_viewers: 1, cta_clicks: 1 },
    ];
    // Per hour: the hours with reports (the others are zeros); they add up to the days.
    const none = { loads: 0, plays: 0, views: 0, unique_viewers: 0, total_watch_seconds: 0, identified_viewers: 0, cta_clicks: 0 };
    const hours = new Map([
      [hourOf(-2, 86_000), days[0]],
      [hourOf(-1, 1), days[1]],
      [hourOf(0, 1), days[2]],
    ]);
    const check = async (player: { id: number }) => {
      expect((await org.api.get(`${P}/analytics/players/${player.id}${period}`)).body).toMatchObject(expected);
      const series = (await org.api.get(`${P}/analytics/players/${player.id}/timeseries${period}&interval=day`)).body;
      expect(series.rows).toMatchObject(days);
      const hourly = (await org.api.get(`${P}/analytics/players/${player.id}/timeseries${period}&interval=hour`)).body.rows;
      expect(hourly).toHaveLength(72);
      for (const row of hourly) expect(row, row.start).toMatchObject(hours.get(row.start) ?? none);
      for (const interval of ['week', 'month']) {
        const rows = (await org.api.get(`${P}/analytics/players/${player.id}/timeseries${period}&interval=${interval}`)).body.rows;
        const sum = (figure: 'loads' | 'views') => rows.reduce((total: number, r: Record<string, number>) => total + r[figure], 0);
        expect([sum('loads'), sum('views')], interval).toEqual([3, 4]);
      }
    };

    const fresh = await createPlayer(org.api, {}, 2);
    const rolled = await createPlayer(org.api, {}, 2);
    const half = await createPlayer(org.api, {}, 2);
    await inThreeStates({ rolled, half, fresh }, store, check);

    // Days before player_days_since (rolled up before migration 0036), and hours before
    // player_hours_since (0040), are read from their reports: what their rolled-up rows say is not read
    // (here made wrong), and v1, a viewer of both sides, counts once.
    await t.database.db
      .updateTable('analytics_rollup')
      .set({ player_days_since: today - DAY_MS, player_hours_since: today - DAY_MS })
      .where('id', '=', 1)
      .execute();
    // And a report of the first day not yet rolled up: read once, with its day's reports.
    await t.database.db
      .insertInto('analytics_events')
      .values({
        organization_id: org.organizationId,
        player_id: rolled.id,
        chapter: 0,
        type: 'cta_click',
        event_id: 2,
        visitor_id: 'v1',
        session_id: `${rolled.id}-s1`,
        dedup_key: `rolled-${rolled.id}-late-click`,
        device: 'desktop',
        browser: 'Chrome',
        created_at: today - 2 * DAY_MS + 5_000,
      })
      .execute();
    expected.cta_clicks = 2;
    // (At the day's first hour: its other reports' hour keeps its figures.)
    days[0] = { ...days[0], cta_clicks: 1 };
    hours.set(hourOf(-2, 5), { ...none, cta_clicks: 1 });
    try {
      await t.database.db
        .updateTable('analytics_days')
        .set({ views: 1000, viewers: null })
        .where('player_id', '=', rolled.id)
        .where('day', '<', today - DAY_MS)
        .execute();
      await t.database.db
        .updateTable('analytics_player_hours')
        .set({ views: 1000, viewers: null })
        .where('player_id', '=', rolled.id)
        .where('hour', '<', today - DAY_MS)
        .execute();
      await check(rolled);
    } finally {
      await t.database.db.updateTable('analytics_rollup').set({ player_days_since: 0, player_hours_since: 0 }).where('id', '=', 1).execute();
    }
    // From the rolled-up rows once more: the wrong figure shows, so the days and hours are what was read before.
    expect((await org.api.get(`${P}/analytics/players/${rolled.id}${period}`)).body.views).toBe(1003);
    const hourly = (await org.api.get(`${P}/analytics/players/${rolled.id}/timeseries${period}&interval=hour`)).body.rows;
    expect(hourly.find((r: { start: string }) => r.start === hourOf(-2, 86_000)).views).toBe(1000);
  });

  it("a CTA's figures are read from its rolled-up days with its newer reports added: the same before, during and after a rollup; its period's days only", async () => {
    const org = await createOrg(t);
    const player = await createPlayer(org.api);
    const newCta = async () => {
      const res = await createCta(org.api, player.chapters_attributes[0].id);
      expect(res.status, res.raw).toBe(201);
      return res.body.id as number;
    };
    const [rolled, half, fresh] = [await newCta(), await newCta(), await newCta()];
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    let n = 0;
    // Per CTA: 3 impressions and 1 click yesterday, 2 impressions and 2 clicks today, 5 impressions ten days ago.
    const store = (cta: number, which: 'first' | 'second') => {
      const rows: Array<[string, number]> = [
        ['cta_impression', today - DAY_MS + 10],
        ['cta_impression', today - DAY_MS + 20],
        ['cta_impression', today - DAY_MS + 30],
        ['cta_click', today - DAY_MS + 40],
        ...Array.from({ length: 5 }, (): [string, number] => ['cta_impression', today - 10 * DAY_MS + 50]),
        ['cta_impression', today + 1],
        ['cta_impression', today + 2],
        ['cta_click', today + 3],
        ['cta_click', today + 4],
      ];
      const part = which === 'first' ? rows.slice(0, 6) : rows.slice(6);
      return t.database.db
        .insertInto('analytics_events')
        .values(
          part.map(([type, created_at]) => ({
            organization_id: org.organizationId,
            player_id: player.id,
            chapter: 0,
            type,
            event_id: cta,
            visitor_id: 'v',
            session_id: `cta-${cta}-${++n}`,
            dedup_key: `cta-rolled-${cta}-${n}`,
            device: 'desktop',
            browser: 'Chrome',
            created_at,
          })),
        )
        .execute();
    };
    const figures = async (cta: number, query: string) => {
      const res = await org.api.get(`${P}/analytics/ctas/${cta}${query}`);
      expect(res.status, res.raw).toBe(200);
      return [res.body.impressions, res.body.clicks];
    };
    const check = async (cta: number) => {
      expect(await figures(cta, '')).toEqual([10, 3]);
      expect(await figures(cta, `?from=${iso(today - DAY_MS)}&to=${iso(today)}`)).toEqual([5, 3]);
      expect(await figures(cta, `?from=${iso(today - DAY_MS)}&to=${iso(today - DAY_MS)}`)).toEqual([3, 1]);
      expect(await figures(cta, `?from=${iso(today - 10 * DAY_MS)}&to=${iso(today - 10 * DAY_MS)}`)).toEqual([5, 0]);
    };
    await inThreeStates({ rolled, half, fresh }, store, check, async () => {
      const kept = await t.database.db
        .selectFrom('analytics_cta_days')
        .select(['event_id', 'impressions', 'clicks'])
        .where('organization_id', '=', org.organizationId)
        .execute();
      expect(kept.filter((r) => r.event_id === fresh)).toEqual([]);
      expect(kept.filter((r) => r.event_id === rolled).reduce((sum, r) => sum + r.impressions, 0)).toBe(10);
    });
    // What is read is the rolled-up days: a wrong figure there shows.
    await t.database.db
      .updateTable('analytics_cta_days')
      .set({ impressions: 1000 })
      .where('event_id', '=', rolled)
      .where('day', '=', today - 10 * DAY_MS)
      .execute();
    expect(await figures(rolled, '')).toEqual([1005, 3]);
    // Another organization's request for the CTA is a 404.
    expect((await (await createOrg(t)).api.get(`${P}/analytics/ctas/${rolled}`)).status).toBe(404);
  });

  it("a player's breakdown is read from its rolled-up days with its newer reports added: the same before, during and after a rollup; days before breakdown_days_since from their reports", async () => {
    const org = await createOrg(t);
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    let n = 0;
    // Starts of playback: [visitor, country, device, browser, day]. v1 watches from DE on two days (one viewer there).
    const starts: Array<[string, string | null, string, string, number]> = [
      ['v1', 'DE', 'desktop', 'Chrome', -2],
      ['v1', 'DE', 'desktop', 'Chrome', -1],
      ['v2', 'DE', 'mobile', 'Safari', -1],
      ['v3', null, 'mobile', 'Safari', -1],
      ['v4', 'FR', 'desktop', 'Firefox', 0],
      ['v5', null, 'desktop', 'Chrome', 0],
    ];
    const store = (player: { id: number }, which: 'first' | 'second') =>
      t.database.db
        .insertInto('analytics_events')
        .values(
          (which === 'first' ? starts.slice(0, 3) : starts.slice(3)).flatMap(([visitor, country, device, browser, day]) => {
            const session = `b-${player.id}-${++n}`;
            const at = today + day * DAY_MS + n * 1000;
            const report = {
              organization_id: org.organizationId,
              player_id: player.id,
              chapter: 0,
              visitor_id: visitor,
              session_id: session,
              device,
              browser,
              country,
            };
            return [
              { ...report, type: 'load', dedup_key: `${session}-load`, created_at: at },
              { ...report, type: 'view', percent: 0, dedup_key: `${session}-start`, created_at: at + 1 },
              { ...report, type: 'view', percent: 100, dedup_key: `${session}-end`, created_at: at + 2 },
            ];
          }),
        )
        .execute();
    const period = `&from=${iso(today - 2 * DAY_MS)}&to=${iso(today)}`;
    const breakdown = async (player: { id: number }, by: string, query = period) => {
      const res = await org.api.get(`${P}/analytics/players/${player.id}/breakdown?by=${by}${query}`);
      expect(res.status, res.raw).toBe(200);
      return res.body.rows;
    };
    const check = async (player: { id: number }) => {
      expect(await breakdown(player, 'country')).toEqual([
        { value: 'DE', views: 3, unique_viewers: 2 },
        { value: null, views: 2, unique_viewers: 2 },
        { value: 'FR', views: 1, unique_viewers: 1 },
      ]);
      expect(await breakdown(player, 'device')).toEqual([
        { value: 'desktop', views: 4, unique_viewers: 3 },
        { value: 'mobile', views: 2, unique_viewers: 2 },
      ]);
      expect(await breakdown(player, 'browser')).toEqual([
        { value: 'Chrome', views: 3, unique_viewers: 2 },
        { value: 'Safari', views: 2, unique_viewers: 2 },
        { value: 'Firefox', views: 1, unique_viewers: 1 },
      ]);
      // One day: yesterday's.
      expect(await breakdown(player, 'country', `&from=${iso(today - DAY_MS)}&to=${iso(today - DAY_MS)}`)).toEqual([
        { value: 'DE', views: 2, unique_viewers: 2 },
        { value: null, views: 1, unique_viewers: 1 },
      ]);
      // Today's: equal views, then the unknown last, then by value.
      const todays = `&from=${iso(today)}&to=${iso(today)}`;
      expect(await breakdown(player, 'country', todays)).toEqual([
        { value: 'FR', views: 1, unique_viewers: 1 },
        { value: null, views: 1, unique_viewers: 1 },
      ]);
      expect(await breakdown(player, 'browser', todays)).toEqual([
        { value: 'Chrome', views: 1, unique_viewers: 1 },
        { value: 'Firefox', views: 1, unique_viewers: 1 },
      ]);
    };
    const fresh = await createPlayer(org.api);
    const rolled = await createPlayer(org.api);
    const half = await createPlayer(org.api);
    await inThreeStates({ rolled, half, fresh }, store, check, async () => {
      const kept = await t.database.db.selectFrom('analytics_breakdown_days').select('player_id').where('organization_id', '=', org.organizationId).execute();
      expect(kept.filter((r) => r.player_id === fresh.id)).toEqual([]);
      expect(kept.filter((r) => r.player_id === rolled.id).length).toBeGreaterThan(0);
    });

    // What is read is the rolled-up days: a wrong figure there shows.
    const wrong = () =>
      t.database.db
        .updateTable('analytics_breakdown_days')
        .set({ views: 1000 })
        .where('player_id', '=', rolled.id)
        .where('dimension', '=', 'country')
        .where('value', '=', 'FR')
        .execute();
    await wrong();
    expect((await breakdown(rolled, 'country'))[0]).toEqual({ value: 'FR', views: 1000, unique_viewers: 1 });
    // Days before breakdown_days_since (rolled up before migration 0039) are read from their reports instead,
    // with the later days' rows and the reports not yet rolled up.
    const mixed = await createPlayer(org.api);
    await store(mixed, 'first');
    await rollUp();
    await store(mixed, 'second');
    const since = (ms: number) => t.database.db.updateTable('analytics_rollup').set({ breakdown_days_since: ms }).where('id', '=', 1).execute();
    try {
      await since(today + DAY_MS);
      await check(rolled);
      await since(today);
      await check(mixed);
    } finally {
      await t.database.db.updateTable('analytics_rollup').set({ breakdown_days_since: 0 }).where('id', '=', 1).execute();
    }
  });

  it("a video's retention is read from its rolled-up days with its newer reports added: the same before, during and after a rollup; a view counts once, on the day it started", async () => {
    const org = await createOrg(t);
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const at = (day: number, s: number) => today + day * DAY_MS + s * 1000;
    let n = 0;
    type Subject = { id: number; video: number };
    /**
     * Three views: a's second report watches [2, 6] again (a covers [0, 6] once); b starts a second
     * before midnight and plays after it (a view of the day before); c reports no start.
     */
    const store = (subject: Subject, which: 'first' | 'second') => {
      const rows: Array<[string, string, number, Record<string, unknown>]> = [
        ['a', 'view', at(-2, 10), { percent: 0 }],
        ['a', 'attention_span', at(-2, 20), { watched: '[[0,4]]', watched_seconds: 4 }],
        ['b', 'view', at(-1, 86_399), { percent: 0 }],
        ['a', 'attention_span', at(-2, 30), { watched: '[[2,6]]', watched_seconds: 4 }],
        ['b', 'attention_span', at(0, 5), { watched: '[[0,10]]', watched_seconds: 10 }],
        ['c', 'attention_span', at(0, 7), { watched: '[[5,8],[9,10]]', watched_seconds: 4 }],
      ];
      return t.database.db
        .insertInto('analytics_events')
        .values(
          (which === 'first' ? rows.slice(0, 3) : rows.slice(3)).map(([session, type, created_at, extra]) => ({
            organization_id: org.organizationId,
            player_id: subject.id,
            video_id: subject.video,
            chapter: 0,
            type,
            visitor_id: `v-${session}`,
            session_id: `${subject.id}-${session}`,
            dedup_key: `retention-${subject.id}-${++n}`,
            device: 'desktop',
            browser: 'Chrome',
            created_at,
            ...extra,
          })),
        )
        .execute();
    };
    const retention = async (video: number, from: number, to: number) => {
      const res = await org.api.get(`${P}/analytics/videos/${video}/retention?from=${iso(from)}&to=${iso(to)}`);
      expect(res.status, res.raw).toBe(200);
      return res.body;
    };
    const check = async (subject: Subject) => {
      expect(await retention(subject.video, today - 2 * DAY_MS, today)).toMatchObject({
        duration: 10,
        views: 3,
        points: [0.6667, 0.6667, 0.6667, 0.6667, 0.6667, 1, 0.6667, 0.6667, 0.3333, 0.6667].map((share, second) => ({ second, share })),
        drop_offs: [
          { second: 6, share_lost: 0.3333 },
          { second: 8, share_lost: 0.3333 },
        ],
      });
      // Today: c alone (b started the day before).
      expect(await retention(subject.video, today, today)).toMatchObject({ views: 1, points: [0, 0, 0, 0, 0, 1, 1, 1, 0, 1].map((share) => ({ share })) });
    };
    const subject = async () => {
      const player = await createPlayer(org.api);
      return { id: player.id as number, video: player.chapters_attributes[0].video_id as number };
    };
    const rolled = await subject();
    await inThreeStates({ rolled, half: await subject(), fresh: await subject() }, store, check);

    // The days before retention_days_since (rolled up before migration 0041) are read from their
    // reports: what their rolled-up rows say (here made wrong) is not read.
    const wrong = (day: number) =>
      t.database.db.updateTable('analytics_retention_days').set({ views: 1000 }).where('video_id', '=', rolled.video).where('day', '=', day).execute();
    await wrong(today - 2 * DAY_MS);
    try {
      await t.database.db
        .updateTable('analytics_rollup')
        .set({ retention_days_since: today - DAY_MS })
        .where('id', '=', 1)
        .execute();
      await check(rolled);
    } finally {
      await t.database.db.updateTable('analytics_rollup').set({ retention_days_since: 0 }).where('id', '=', 1).execute();
    }
    // From the rolled-up rows once more: the wrong figure shows, so the days are what was read before.
    expect((await retention(rolled.video, today - 2 * DAY_MS, today)).views).toBe(1002);
  });

  it.each([
    ['0039', "the players' breakdowns", m0039, 'breakdown_days_since'],
    ['0040', "the players' hours", m0040, 'player_hours_since'],
    ['0041', "the videos' retention", m0041, 'retention_days_since'],
  ] as const)(
    'migration %s: %s read from the rollups start the day after the newest day rolled up before it (at once on a new database)',
    async (_, __, migration, column) => {
      const own = await createTestApp(dialect);
      try {
        const since = async () => Number((await own.database.db.selectFrom('analytics_rollup').select(column).executeTakeFirstOrThrow())[column]);
        expect(await since()).toBe(0);
        await migration.down(own.database.db);
        const o = await createOrg(own);
        const player = await createPlayer(o.api);
        const day = Date.parse('2026-03-02T00:00:00Z');
        for (const d of [day - DAY_MS, day]) {
          await own.database.db.insertInto('analytics_days').values({ organization_id: o.organizationId, player_id: player.id, day: d, views: 1 }).execute();
        }
        await migration.up(own.database.db);
        expect(await since()).toBe(day + DAY_MS);
      } finally {
        await own.close();
      }
    },
  );

  it("migration 0038: a CTA's days are filled from the reports the rollups have read; the others are left to the next batch", async () => {
    const own = await createTestApp(dialect);
    try {
      const o = await createOrg(own);
      const player = await createPlayer(o.api);
      await m0038.down(own.database.db);
      const day = Date.parse('2026-03-02T00:00:00Z');
      const report = (type: string, eventId: number, at: number, i: number) => ({
        organization_id: o.organizationId,
        player_id: player.id,
        chapter: 0,
        type,
        event_id: eventId,
        session_id: `m38-${i}`,
        dedup_key: `m38-${i}`,
        device: 'desktop',
        browser: 'Chrome',
        created_at: at,
      });
      const ids = await own.database.db
        .insertInto('analytics_events')
        .values([
          report('cta_impression', 7, day + 1, 1),
          report('cta_impression', 7, day + 2, 2),
          report('cta_click', 7, day + 3, 3),
          report('cta_impression', 7, day + DAY_MS, 4),
          report('cta_impression', 8, day + 5, 5),
          report('cta_impression', 7, day + 6, 6),
        ])
        .returning('id')
        .execute();
      // The rollups have read up to the fifth report.
      await own.database.db.updateTable('analytics_rollup').set({ last_event_id: ids[4].id }).where('id', '=', 1).execute();
      await m0038.up(own.database.db);
      const days = async () => {
        const rows = await own.database.db
          .selectFrom('analytics_cta_days')
          .select(['event_id', 'day', 'impressions', 'clicks'])
          .orderBy('event_id')
          .orderBy('day')
          .execute();
        return rows.map((r) => ({ ...r, day: Number(r.day) }));
      };
      expect(await days()).toEqual([
        { event_id: 7, day, impressions: 2, clicks: 1 },
        { event_id: 7, day: day + DAY_MS, impressions: 1, clicks: 0 },
        { event_id: 8, day, impressions: 1, clicks: 0 },
      ]);
      // The next batch adds the one report above the progress, once.
      await own.services.analyticsRollups.catchUp();
      expect(await days()).toEqual([
        { event_id: 7, day, impressions: 3, clicks: 1 },
        { event_id: 7, day: day + DAY_MS, impressions: 1, clicks: 0 },
        { event_id: 8, day, impressions: 1, clicks: 0 },
      ]);
    } finally {
      await own.close();
    }
  });

  it("migration 0036: the players' days read from the rollups start the day after the newest day rolled up before it (at once on a new database)", async () => {
    const own = await createTestApp(dialect);
    try {
      const since = async () =>
        Number((await own.database.db.selectFrom('analytics_rollup').select('player_days_since').executeTakeFirstOrThrow()).player_days_since);
      expect(await since()).toBe(0);
      await m0036.down(own.database.db);
      const org = await createOrg(own);
      const player = await createPlayer(org.api);
      const day = Date.parse('2026-03-02T00:00:00Z');
      for (const d of [day - DAY_MS, day]) {
        await own.database.db.insertInto('analytics_days').values({ organization_id: org.organizationId, player_id: player.id, day: d, views: 1 }).execute();
      }
      await m0036.up(own.database.db);
      expect(await since()).toBe(day + DAY_MS);
      expect(
        (await own.database.db.selectFrom('analytics_days').select(['viewers', 'emails']).execute()).every((r) => r.viewers === null && r.emails === null),
      ).toBe(true);
    } finally {
      await own.close();
    }
  });

  it('the recurring job keeps the rollups fresh: a report appears in the summary within the interval', async () => {
    const runner = new JobRunner(t.database.db, { handlers: jobHandlers(t.container), backoff: () => 10, pollMs: 20 });
    await t.services.analyticsRollups.schedule();
    runner.start();
    try {
      const org = await createOrg(t);
      const player = await createPlayer(org.api);
      await beacon(player.uuid, 'job-1', { type: 'view', percent_watched: 0 });
      await vi.waitFor(async () => expect(await summaryOf(org)).toMatchObject({ views: 1, plays: 1 }), { timeout: 10_000, interval: 200 });
      await beacon(player.uuid, 'job-2', { type: 'view', percent_watched: 0 });
      await vi.waitFor(async () => expect(await summaryOf(org)).toMatchObject({ views: 2, plays: 2 }), { timeout: 10_000, interval: 200 });
    } finally {
      await runner.stop(1000);
    }
    // Each run queued the next one before it rolled up: one waits in the queue, never two.
    const queued = await t.database.db.selectFrom('jobs').select('id').where('type', '=', 'analytics.rollup').where('status', '=', 'queued').execute();
    expect(queued).toHaveLength(1);
  });

  it('answers requests between the batches of a run that catches up a backlog', async () => {
    const org = await createOrg(t);
    const player = await createPlayer(org.api);
    for (let i = 0; i < 40; i++) await beacon(player.uuid, `backlog-${i}`, { type: 'load' });
    await rollUp();
    for (let i = 0; i < 40; i++) await beacon(player.uuid, `backlog-more-${i}`, { type: 'load' });
    // Two reports a batch: twenty batches. Over a real socket, whose answer needs a turn of the event
    // loop: on SQLite, whose queries answer at once, a run that never gave one held every request
    // until it was done.
    const rollups = new RollupService(t.database.db, { intervalSeconds: 1, batchSize: 2 }, new RollupRepository(t.database.db));
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const order: string[] = [];
    const read = fetch(`${address}${P}/players/${player.id}`, { headers: { authorization: `Bearer ${org.token}` } }).then((res) => {
      expect(res.status).toBe(200);
      order.push('request answered');
    });
    const run = rollups.catchUp().then((result) => {
      expect(result.batches).toBe(20);
      order.push('rollup done');
    });
    await Promise.all([read, run]);
    expect(order).toEqual(['request answered', 'rollup done']);
    expect(await summaryOf(org)).toMatchObject({ loads: 80 });
  });

  it('adds each report to its UTC day: a load either side of midnight counts in the day it was stored', async () => {
    const org = await createOrg(t);
    const player = await createPlayer(org.api);
    await beacon(player.uuid, 'late', { type: 'view', percent_watched: 0 });
    await beacon(player.uuid, 'early', { type: 'view', percent_watched: 0 });
    await beacon(player.uuid, 'early', { type: 'view', percent_watched: 100 });
    // Stored at 23:59:59.999 on 2026-03-01 and at 00:00:00 on 2026-03-02 (UTC).
    const midnight = Date.parse('2026-03-02T00:00:00Z');
    const at = (load: string, ms: number) =>
      t.database.db.updateTable('analytics_events').set({ created_at: ms }).where('player_id', '=', player.id).where('session_id', '=', load).execute();
    await at('late', midnight - 1);
    await at('early', midnight);
    await rollUp();
    const days = await t.database.db
      .selectFrom('analytics_days')
      .select(['day', 'views', 'completions'])
      .where('player_id', '=', player.id)
      .orderBy('day')
      .execute();
    expect(days.map((d) => [Number(d.day), d.views, d.completions])).toEqual([
      [midnight - DAY_MS, 1, 0],
      [midnight, 1, 1],
    ]);
    expect(await summaryOf(org, '?from=2026-03-01&to=2026-03-01')).toMatchObject({ views: 1, unique_viewers: 1, completion_rate: 0 });
    expect(await summaryOf(org, '?from=2026-03-02&to=2026-03-02')).toMatchObject({ views: 1, unique_viewers: 1, completion_rate: 1 });
    expect(await summaryOf(org, '?from=2026-03-01&to=2026-03-02')).toMatchObject({ views: 2, unique_viewers: 2 });
  });

  // A PostgreSQL matter: SQLite has no such case, and the test is not made for it.
  if (dialect === 'postgres')
    it('on PostgreSQL, waits for a report whose smaller id commits after a larger one, and counts both', async () => {
      const org = await createOrg(t);
      const player = await createPlayer(org.api);
      const other = t.openAnother();
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const report = (load: string) => ({
          organization_id: org.organizationId,
          player_id: player.id,
          chapter: 0,
          type: 'view',
          percent: 0,
          session_id: load,
          device: 'desktop',
          browser: 'Chrome',
          dedup_key: `${player.id}:${load}:0:view:0`,
          created_at: Date.now(),
        });
        // A transaction takes the smaller id and commits late; a later report commits at once.
        let inserted!: () => void;
        const smaller = new Promise<void>((resolve) => (inserted = resolve));
        const slow = other.db.transaction().execute(async (trx) => {
          await trx.insertInto('analytics_events').values(report('slow')).execute();
          inserted();
          await held;
        });
        await smaller;
        await beacon(player.uuid, 'fast', { type: 'view', percent_watched: 0 });
        const rolled = rollUp();
        setTimeout(release, 300);
        await Promise.all([slow, rolled]);
        await rollUp();
        expect(await summaryOf(org)).toMatchObject({ views: 2, plays: 2 });
      } finally {
        await other.destroy();
      }
    });

  it('retention removes raw reports past ANALYTICS_RETENTION_DAYS only once rolled up; the summary keeps their figures', async () => {
    const org = await createOrg(t);
    const player = await createPlayer(org.api);
    await beacon(player.uuid, 'old-1', { type: 'view', percent_watched: 0 });
    await beacon(player.uuid, 'old-1', { type: 'identified_view', email: 'old@example.com' });
    const cta = (await createCta(org.api, player.chapters_attributes[0].id)).body.id;
    await beacon(player.uuid, 'old-1', { type: 'cta_impression', event_id: cta });
    const later = Date.now() + 731 * DAY_MS;
    const stored = async () => (await t.database.db.selectFrom('analytics_events').select('id').where('player_id', '=', player.id).execute()).length;

    expect((await org.api.get(`${P}/analytics/viewers`)).body.viewers).toEqual([expect.objectContaining({ email: 'old@example.com', loads: 1 })]);
    // The organization's row and the player's.
    const identified = async () => [
      ...(await t.database.db.selectFrom('analytics_identified').select('email').where('organization_id', '=', org.organizationId).execute()),
      ...(await t.database.db.selectFrom('analytics_identified_players').select('email').where('organization_id', '=', org.organizationId).execute()),
    ];
    expect(await identified()).toEqual([{ email: 'old@example.com' }, { email: 'old@example.com' }]);
    // Not rolled up yet: kept, however old.
    await t.services.housekeeping.sweep(later);
    expect(await stored()).toBe(3);
    // The address is no longer listed among the identified viewers (past retention, whatever the rollups),
    // the organization's or the player's.
    expect((await org.api.get(`${P}/analytics/viewers`)).body.viewers).toEqual([]);
    expect(await identified()).toEqual([]);

    await rollUp();
    const swept = await t.services.housekeeping.sweep(later);
    expect(swept.analytics_reports).toBeGreaterThanOrEqual(3);
    expect(await stored()).toBe(0);
    // The raw reports are gone, the rollups stay: the player's figures, hours, breakdown and its CTA's are read from them, as the summary's.
    expect((await org.api.get(`${P}/analytics/players/${player.id}`)).body).toMatchObject({ views: 1, plays: 1, unique_viewers: 1, identified_viewers: 1 });
    expect((await org.api.get(`${P}/analytics/ctas/${cta}`)).body).toMatchObject({ impressions: 1, clicks: 0 });
    expect((await org.api.get(`${P}/analytics/players/${player.id}/breakdown?by=browser`)).body.rows).toEqual([
      { value: 'Chrome', views: 1, unique_viewers: 1 },
    ]);
    const hourly = (await org.api.get(`${P}/analytics/players/${player.id}/timeseries?interval=hour`)).body.rows;
    expect(hourly.filter((r: { views: number }) => r.views > 0)).toEqual([expect.objectContaining({ views: 1, unique_viewers: 1, identified_viewers: 1 })]);
    expect(await summaryOf(org)).toMatchObject({ views: 1, plays: 1, identified_viewers: 1 });
  });
});

// The thread is how SQLite in a file rolls up (the server's case); in memory, and on PostgreSQL, whose
// queries do not hold the event loop, the batches run where they are asked for, as above.
describe('analytics rollups of a SQLite file, on a thread of their own', () => {
  let t: TestApp;
  let dir: string;
  let org: OrgContext;
  let player: { id: number; uuid: string };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-rollup-thread-'));
    t = await createTestApp('sqlite', {}, { sqlitePath: path.join(dir, 'reelbase.sqlite') });
    org = await createOrg(t);
    player = await createPlayer(org.api);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const summary = async () => (await org.api.get(`${P}/analytics/summary`)).body;
  let backlogs = 0;
  /** `count` starts of playback stored at once, each a load of its own. */
  const backlog = (count: number) => {
    const prefix = `backlog-${++backlogs}-`;
    return sql`insert into analytics_events (organization_id, player_id, video_id, chapter, type, percent, visitor_id, session_id, device, browser, dedup_key, created_at)
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count})
      select ${org.organizationId}, ${player.id}, null, 0, 'view', 0, ${prefix} || (i % 100), ${prefix} || i, 'desktop', 'Chrome', ${prefix} || i, ${Date.now()} from n`.execute(
      t.database.db,
    );
  };
  const threads = () => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]);

  it('adds a small backlog on the event loop, a large one on its own connection without holding the event loop', async () => {
    for (const [load, body] of [
      ['t1', { type: 'load' }],
      ['t1', { type: 'view', percent_watched: 0 }],
      ['t1', { type: 'view', percent_watched: 100 }],
      ['t2', { type: 'view', percent_watched: 0 }],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/watch/${player.uuid}/analytics`,
        headers: { 'user-agent': BROWSER_UA },
        payload: { player_load_id: load, visitor_uuid: `visitor-of-${load}`, chapter: 0, ...body },
      });
      expect(res.statusCode, res.body).toBe(204);
    }
    const before = threads();
    expect(await t.services.analyticsRollups.catchUp()).toMatchObject({ batches: 1, complete: true });
    expect(threads()).toBe(before);
    expect(await summary()).toMatchObject({ loads: 1, plays: 2, views: 2, completion_rate: 0.5, unique_viewers: 2 });

    // Two batches of the thread's 20,000.
    await backlog(30_000);
    const loop = performance.eventLoopUtilization();
    const result = await t.services.analyticsRollups.catchUp();
    const held = performance.eventLoopUtilization(loop);
    expect(result).toMatchObject({ batches: 2, complete: true });
    expect(threads()).toBeGreaterThan(before);
    expect(await summary()).toMatchObject({ plays: 30_002, views: 30_002 });
    // On the event loop, the run would have held it about half the time (it rests as long as each
    // batch held it); here the loop only waited for the thread's answer.
    expect(held.utilization).toBeLessThan(0.2);
  });

  it('ends a run between batches when aborted (a shutdown); the next run adds the rest, each report once', async () => {
    const { plays } = await summary();
    await backlog(100_000);
    const abort = new AbortController();
    const run = t.services.analyticsRollups.catchUp(abort.signal);
    abort.abort();
    const stopped = await run;
    expect(stopped.complete).toBe(false);
    expect(stopped.batches).toBeLessThan(5);
    expect(await t.services.analyticsRollups.catchUp()).toMatchObject({ complete: true });
    expect((await summary()).plays).toBe(plays + 100_000);
  });

  it('a thread that cannot start fails its run; the next runs go on the event loop', async () => {
    // A directory where the database file should be: the thread's connection cannot open it.
    const rollups = new RollupService(
      t.database.db,
      { intervalSeconds: 1 },
      new RollupRepository(t.database.db),
      new RollupThread({ file: dir, intervalSeconds: 1 }),
    );
    const { plays } = await summary();
    await backlog(2_500);
    await expect(rollups.catchUp()).rejects.toThrow(/analytics rollups/);
    expect(await rollups.catchUp()).toMatchObject({ batches: 3, complete: true });
    expect((await summary()).plays).toBe(plays + 2_500);
    await rollups.close();
  });

  it('closes with the app: the thread ends, and later runs go on the event loop', async () => {
    // The thread started (a backlog of more than one batch), then the app closed.
    await backlog(25_000);
    await t.services.analyticsRollups.catchUp();
    const before = threads();
    await t.app.close();
    for (const deadline = Date.now() + 2_000; threads() >= before && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect(threads()).toBeLessThan(before);
    await backlog(2_000);
    const after = await t.services.analyticsRollups.catchUp();
    expect(after).toMatchObject({ batches: 2, complete: true });
    const { last } = await t.database.db
      .selectFrom('analytics_events')
      .select((eb) => eb.fn.max('id').as('last'))
      .executeTakeFirstOrThrow();
    expect(after.last_event_id).toBe(Number(last));
    expect(threads()).toBeLessThan(before);
  });
});
