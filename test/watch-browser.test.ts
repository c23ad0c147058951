import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { publishHlsFolder } from './helpers/live-output.ts';
import { ffmpegPath, makeTestMedia, type TestMedia } from './helpers/media.ts';

const run = promisify(execFile);

const CHROMIUM = '/usr/bin/chromium';
const P = '/dashboard/v1';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The player script of the watch page in a real browser (docs/watch.md): it runs under the page's
 * CSP, shows a CTA in its sandboxed frame at its second and closes it, and holds playback behind the
 * email gate until an address is given in the frame. The pages' server-side rules are in
 * watch.test.ts, on every database; this is about the browser side, so SQLite is enough. Skipped
 * where Chromium is not installed (.ci/run installs it).
 */
describe.runIf(fs.existsSync(CHROMIUM))('the watch page in Chromium', () => {
  let t: TestApp;
  let org: OrgContext;
  let browser: Browser;
  let base: string;
  let media: TestMedia;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-browser-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', { DATA_DIR: dataDir, PUBLIC_URL: base });
    await t.app.listen({ host: '127.0.0.1', port });
    org = await createOrg(t);
    fs.mkdirSync(path.join(dataDir, 'src'));
    media = await makeTestMedia(path.join(dataDir, 'src'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--autoplay-policy=no-user-gesture-required'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A player whose one chapter plays the 2 s test clip. */
  async function playablePlayer() {
    const player = await createPlayer(org.api, { mute_onload: true });
    const videoId = player.chapters_attributes[0].video_id;
    // In the video's folder, as the pipeline stores it: the page's grant reaches only its player's videos.
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const key = `videos/${uuid}/test/sd.mp4`;
    fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
    fs.copyFileSync(media.small, path.join(t.config.mediaDir, key));
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .insertInto('video_files')
      .values({ video_id: videoId, custom_identifier: null, quality: 'sd', path: key, created_at: now, content_type: 'video/mp4' })
      .execute();
    await t.database.db.updateTable('videos').set({ status: 'ready' }).where('id', '=', videoId).execute();
    return player;
  }

  /** Opens the page and collects what the browser complained about (CSP violations, script errors). */
  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 404/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url);
    return { page, problems };
  }

  it('shows a CTA in its sandboxed frame at its second, under the CSP, and closes it', async () => {
    const player = await playablePlayer();
    const cta = await org.api.post(`${P}/ctas`, {
      chapter_id: player.chapters_attributes[0].id,
      second: 0,
      duration: 30,
      width: 260,
      html: '<p id="offer">Buy now</p>',
    });
    expect(cta.status).toBe(201);
    const { page, problems } = await open(`${base}/watch/${player.uuid}`);
    try {
      await page.click('.rb-play');
      const overlay = page.locator(`.rb-overlay[data-event-id="${cta.body.id}"]`);
      await overlay.waitFor({ timeout: 10_000 });
      const frame = page.frameLocator(`.rb-overlay[data-event-id="${cta.body.id}"] iframe`);
      await expect(frame.locator('#offer').textContent({ timeout: 5_000 })).resolves.toBe('Buy now');
      expect(await overlay.locator('iframe').getAttribute('sandbox')).toBe('allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox');
      expect(await overlay.evaluate((el) => (el as HTMLElement).style.width)).toBe('260px');
      await overlay.locator('.rb-close').click();
      await overlay.waitFor({ state: 'detached', timeout: 5_000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('holds playback behind the email gate until an address is given in its frame', async () => {
    const player = await playablePlayer();
    const gate = await org.api.post(`${P}/ctas/default_email_gate`, {
      chapter_id: player.chapters_attributes[0].id,
      is_closeable: false,
      is_new_contact: false,
    });
    expect(gate.status).toBe(201);
    const { page, problems } = await open(`${base}/watch/${player.uuid}`);
    try {
      await page.evaluate(() => {
        document.querySelector('[data-reelbase-player]')!.addEventListener('reelbase:email', (e) => ((window as any).given = (e as CustomEvent).detail.email));
      });
      await page.click('.rb-play');
      const overlay = page.locator(`.rb-overlay[data-event-id="${gate.body.id}"]`);
      await overlay.waitFor({ timeout: 10_000 });
      expect(await overlay.locator('.rb-close').count()).toBe(0);
      await page.waitForFunction(() => document.querySelector('video')!.paused);
      // Play is refused while the gate is open.
      await page.evaluate(() =>
        document
          .querySelector('video')!
          .play()
          .catch(() => {}),
      );
      await page.waitForTimeout(300);
      expect(await page.evaluate(() => document.querySelector('video')!.paused)).toBe(true);

      const frame = page.frameLocator(`.rb-overlay[data-event-id="${gate.body.id}"] iframe`);
      await frame.locator('input[type=email]').fill('not an address');
      await frame.locator('button[type=submit]').click();
      await page.waitForTimeout(300);
      expect(await overlay.count()).toBe(1);
      await frame.locator('input[type=email]').fill('viewer@example.com');
      await frame.locator('button[type=submit]').click();
      await overlay.waitFor({ state: 'detached', timeout: 5_000 });
      expect(await page.evaluate(() => (window as any).given)).toBe('viewer@example.com');
      expect(await page.evaluate((uuid) => sessionStorage.getItem(`reelbase-email:${uuid}`), player.uuid)).toBe('viewer@example.com');
      await page.waitForFunction(() => !document.querySelector('video')!.paused, undefined, { timeout: 5_000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('reports the views, the attention and the address given to the analytics webhooks', async () => {
    const player = await playablePlayer();
    const gate = await org.api.post(`${P}/ctas/default_email_gate`, {
      chapter_id: player.chapters_attributes[0].id,
      is_closeable: false,
      is_new_contact: false,
    });
    expect(gate.status).toBe(201);
    expect((await org.api.post(`${P}/organizations/${org.organizationId}/webhooks/analytics`, { url: 'https://hooks.example.com/analytics' })).status).toBe(
      201,
    );
    const { page, problems } = await open(`${base}/watch/${player.uuid}`);
    try {
      await page.click('.rb-play');
      const frame = page.frameLocator('.rb-overlay iframe');
      await frame.locator('input[type=email]').fill('fan@example.com');
      await frame.locator('button[type=submit]').click();
      await page.waitForFunction(() => document.querySelector('video')!.ended, undefined, { timeout: 15_000 });
      const messages = async () =>
        (await t.database.db.selectFrom('jobs').select('payload').where('type', '=', 'webhook.notify').orderBy('id').execute())
          .map((j) => JSON.parse(j.payload).body)
          .filter((b) => b.player_uuid === player.uuid);
      for (const end = Date.now() + 5_000; (await messages()).length < 7 && Date.now() < end;) await page.waitForTimeout(50);
      const bodies = await messages();
      expect(
        bodies
          .filter((b) => b.type === 'view')
          .map((b) => b.percent_watched)
          .sort((a, b) => a - b),
      ).toEqual([0, 25, 50, 75, 100]);
      expect(bodies.find((b) => b.type === 'identified_view')?.email).toBe('fan@example.com');
      const attention = bodies.find((b) => b.type === 'attention_span');
      // Watched once from start to end: every twentieth once.
      expect(attention.attention_span.buckets).toEqual(Array(20).fill(1));
      expect(new Set(bodies.map((b) => b.player_load_id)).size).toBe(1);
      expect(bodies.every((b) => b.embed_url === undefined || b.embed_url === `${base}/watch/${player.uuid}`)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('plays a live broadcast through hls.js where the browser has no HLS of its own', async () => {
    const created = await org.api.post(`${P}/organizations/${org.organizationId}/live`, {
      video_options: { video_name: 'On air', description: 'x', stream_tags: ['live'] },
    });
    expect(created.status, created.raw).toBe(201);
    const instance = (await org.api.get(`${P}/organizations/${org.organizationId}/live/${created.body.stream_instance_id}`)).body.instance_details;
    // A broadcast as the ingest publishes it: one part of MPEG-TS segments (made by ffmpeg here) with its index.
    const part = path.join(dataDir, 'hls-p0001');
    fs.mkdirSync(part, { recursive: true });
    await run(ffmpegPath, [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      media.small,
      '-c',
      'copy',
      '-f',
      'hls',
      '-hls_time',
      '1',
      '-hls_list_size',
      '0',
      '-hls_segment_filename',
      path.join(part, 's%05d.ts'),
      path.join(part, 'index.m3u8'),
    ]);
    await publishHlsFolder(t.container.media.store, instance.player_uuid, 'p0001', part);
    await t.database.db.updateTable('live_stream_instances').set({ status: 'live' }).where('id', '=', created.body.stream_instance_id).execute();

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    // As Firefox answers: no HLS of its own.
    await page.addInitScript(() => {
      const own = HTMLMediaElement.prototype.canPlayType;
      HTMLMediaElement.prototype.canPlayType = function (type: string) {
        return /mpegurl/i.test(type) ? '' : own.call(this, type);
      };
    });
    try {
      await page.goto(`${base}/watch/${instance.player_uuid}`);
      await page.waitForFunction(() => typeof (window as any).Hls === 'function', undefined, { timeout: 10_000 });
      await page.evaluate(() => {
        const video = document.querySelector('video')!;
        video.muted = true;
        return video.play().catch(() => {});
      });
      await page.waitForFunction(() => document.querySelector('video')!.currentTime > 0.5, undefined, { timeout: 15_000 });
      expect(await page.evaluate(() => (document.querySelector('.rb-state') as HTMLElement).hidden)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a hub page: a card leads to the watch page, which plays', async () => {
    const player = await playablePlayer();
    const hub = await org.api.post(`${P}/hubs`, { name: 'Browser hub' });
    expect(hub.status).toBe(201);
    expect((await org.api.post(`${P}/hubs/${hub.body.id}/categories`, { name: 'All', player_ids: [player.id] })).status).toBe(201);
    const { page, problems } = await open(`${base}/hubs/${hub.body.slug}`);
    try {
      await page.click(`a[data-player="${player.uuid}"]`);
      await page.waitForURL(`${base}/watch/${player.uuid}`);
      await page.click('.rb-play');
      await page.waitForFunction(() => document.querySelector('video')!.currentTime > 0.3, undefined, { timeout: 15_000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
