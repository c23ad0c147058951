import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { launchViewerBrowser } from './helpers/browser.ts';
import { createEmailGate, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { ffmpegPath } from './helpers/media.ts';
import { freePort, until } from './helpers/processes.ts';

const run = promisify(execFile);
const P = '/dashboard/v1';
const SECONDS = 10;

/**
 * Issue 16's proof, on each database: a viewer in Chromium passes the email gate, plays, clicks a
 * CTA, seeks ahead, plays to the end, watches the last seconds again and leaves; then the reporting
 * API shows exactly that (one view, the seconds actually played within 1 s, one click, one identified
 * viewer), computed from the reports the page sent and the server kept (docs/analytics.md).
 */
describe.each(dialects)('analytics of a real viewer on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let browser: Browser;
  let base: string;
  let dataDir: string;
  let clip: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-analytics-browser-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp(dialect, { DATA_DIR: dataDir, PUBLIC_URL: base });
    await t.app.listen({ host: '127.0.0.1', port });
    org = await createOrg(t);
    clip = path.join(dataDir, 'clip.mp4');
    await run(ffmpegPath, [
      ...['-hide_banner', '-loglevel', 'error', '-y'],
      ...['-f', 'lavfi', '-i', `testsrc=size=320x240:rate=25:duration=${SECONDS}`, '-f', 'lavfi', '-i', `sine=frequency=440:duration=${SECONDS}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', clip],
    ]);
    browser = await launchViewerBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A player of the 10 s clip, as processing leaves it (an MP4 file in the video's folder). */
  async function playerOfClip() {
    const player = await createPlayer(org.api, { mute_onload: true });
    const videoId = player.chapters_attributes[0].video_id as number;
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const key = `videos/${uuid}/test/sd.mp4`;
    fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
    fs.copyFileSync(clip, path.join(t.config.mediaDir, key));
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .insertInto('video_files')
      .values({ video_id: videoId, custom_identifier: null, quality: 'sd', path: key, created_at: now, content_type: 'video/mp4' })
      .execute();
    await t.database.db.updateTable('videos').set({ status: 'ready', seconds: SECONDS }).where('id', '=', videoId).execute();
    return { player, videoId };
  }

  it('plays, seeks, rewatches, clicks a CTA and passes the gate: the reporting API shows exactly that', { timeout: 90_000 }, async () => {
    const { player, videoId } = await playerOfClip();
    const chapterId = player.chapters_attributes[0].id as number;
    expect((await createEmailGate(org.api, chapterId, 0)).status).toBe(201);
    const cta = await org.api.post(`${P}/ctas`, {
      chapter_id: chapterId,
      second: 1,
      duration: 3,
      width: 240,
      html: '<p><a href="https://offers.example.com/deal">See the offer</a></p>',
    });
    expect(cta.status, cta.raw).toBe(201);

    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(20_000);
    // The CTA's link opens a tab of its own: let it load (answered here, for every page of the
    // context: a route of the page alone left the tab to the network, and a click once waited 20 s
    // on CI), then close it.
    await page.context().route('https://offers.example.com/**', (route) => route.fulfill({ status: 200, body: 'offer' }));
    page.context().on(
      'page',
      (tab) =>
        void tab.waitForLoadState().then(
          () => tab.close(),
          () => undefined,
        ),
    );
    try {
      // What the player sends, and its 'ended' events (the attribute turns true before the event's
      // handler has reported the pass: waiting on the event keeps the passes apart).
      const attentionSent: unknown[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url().endsWith('/analytics') && request.postData()?.includes('"attention_span"'))
          attentionSent.push(request.postData());
      });
      await page.goto(`${base}/watch/${player.uuid}`);
      await page.evaluate(() => {
        const w = window as unknown as { endedCount: number };
        w.endedCount = 0;
        document.querySelector('video')!.addEventListener('ended', () => w.endedCount++);
      });
      const endedTimes = (n: number) => page.waitForFunction((x) => (window as unknown as { endedCount: number }).endedCount >= x, n, { timeout: 20_000 });
      const gate = page.frameLocator('.rb-overlay iframe');
      await gate.locator('input[type=email]').fill('Viewer@Example.com');
      await gate.locator('button[type=submit]').click();
      const at = (s: number) => page.waitForFunction((x) => document.querySelector('video')!.currentTime >= x, s);
      // Playing, once the gate let go (the player may pause and play again while it closes the gate).
      const keepPlaying = () =>
        page.waitForFunction(() => {
          const video = document.querySelector('video')!;
          if (video.paused && !video.ended) void video.play().catch(() => undefined);
          return !video.paused && video.currentTime > 0;
        });
      await keepPlaying();
      // The CTA shows from second 1: its link is clicked.
      await page.locator('.rb-overlay[data-event-id] iframe').first().waitFor();
      await page.frameLocator(`.rb-overlay[data-event-id="${cta.body.id}"] iframe`).locator('a').click();
      await at(3);
      // Seek ahead to 7 s (3..7 is skipped), play to the end.
      await page.evaluate(() => {
        const video = document.querySelector('video')!;
        video.currentTime = 7;
      });
      await endedTimes(1);
      const firstPass = await page.evaluate(() => document.querySelector('video')!.currentTime);
      // Watch the last two seconds again.
      await page.evaluate(() => {
        document.querySelector('video')!.currentTime = 8;
      });
      await keepPlaying();
      await endedTimes(2);
      expect(firstPass).toBeGreaterThan(9);
      await until('both passes reported', async () => attentionSent.length >= 2, 10_000);
      // Leaving the page sends what was watched last.
      await page.goto('about:blank');
    } finally {
      await page.close();
    }

    // What a seek skipped is not watched: 0→~3.x, 7→10, then 8→10 again.
    const figures = async () => (await org.api.get(`${P}/analytics/players/${player.id}`)).body;
    for (const end = Date.now() + 5_000; (await figures()).total_watch_seconds < 7 && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
    const summary = await figures();
    expect(summary).toMatchObject({ loads: 1, plays: 1, views: 1, unique_viewers: 1, identified_viewers: 1, cta_clicks: 1 });
    const rows = await t.database.db.selectFrom('analytics_events').select(['type', 'watched_seconds', 'watched']).where('player_id', '=', player.id).execute();
    const attention = rows.filter((r) => r.type === 'attention_span');
    // The seconds actually played: about 3 before the seek (the click takes its time), 3 after it, 2 again.
    const played = attention.reduce((sum, r) => sum + Number(r.watched_seconds), 0);
    const stretches = attention.flatMap((r) => JSON.parse(r.watched!) as Array<[number, number]>);
    const beforeSeek = Math.max(...stretches.filter(([a]) => a < 1).map(([, b]) => b));
    expect(beforeSeek).toBeGreaterThanOrEqual(2.5); // the last reading before the seek (timeupdate comes every quarter second)
    expect(beforeSeek).toBeLessThan(7);
    expect(Math.abs(played - (beforeSeek + 3 + 2)), JSON.stringify(attention)).toBeLessThanOrEqual(1);
    expect(Math.abs(summary.total_watch_seconds - played)).toBeLessThanOrEqual(0.1);
    expect((await org.api.get(`${P}/analytics/ctas/${cta.body.id}`)).body).toMatchObject({ impressions: 1, clicks: 1, click_through_rate: 1 });
    const viewers = (await org.api.get(`${P}/analytics/viewers?email=viewer@example.com`)).body.viewers;
    expect(viewers).toEqual([
      expect.objectContaining({ email: 'viewer@example.com', loads: 1, players: [expect.objectContaining({ player_id: player.id, views: 1 })] }),
    ]);
    // The retention curve: everyone at 0..3 and 7..10, no one in the skipped stretch.
    const retention = (await org.api.get(`${P}/analytics/videos/${videoId}/retention`)).body;
    expect(retention.views).toBe(1);
    expect(retention.points[1].share).toBe(1);
    expect(retention.points[5].share).toBe(0);
    expect(retention.points[8].share).toBe(1);
  });
});
