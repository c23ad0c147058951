import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { BROWSER_UA, createEmailGate, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { configOf } from './helpers/pages.ts';

const P = '/dashboard/v1';

interface Page {
  status: number;
  headers: Record<string, any>;
  html: string;
}

/**
 * The public pages (docs/watch.md): GET /watch/:uuid, GET /embed/:uuid, the access code form, and
 * oEmbed under /dashboard/v1(.1)/oembed and at the root. No token anywhere.
 */
describe.each(dialects)('watch and embed pages on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-watch-'));
    t = await createTestApp(dialect, { DATA_DIR: dataDir });
    org = await createOrg(t);
  });

  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function page(url: string, options: { ip?: string; headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Page> {
    const res = await t.app.inject({
      method: options.form ? 'POST' : 'GET',
      url,
      remoteAddress: options.ip ?? '203.0.113.7',
      headers: { ...(options.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...options.headers },
      ...(options.form ? { payload: new URLSearchParams(options.form).toString() } : {}),
    });
    return { status: res.statusCode, headers: res.headers, html: res.body };
  }

  /** Makes a chapter's video ready with real files in the media store, as the pipeline would. */
  async function makeReady(videoId: number, qualities: string[] = ['sd', 'hd']) {
    const now = Math.floor(Date.now() / 1000);
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    for (const quality of qualities) {
      const key = `videos/${uuid}/test/${quality}.mp4`;
      fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
      fs.writeFileSync(path.join(t.config.mediaDir, key), `${quality} bytes of ${videoId}`);
      await t.database.db
        .insertInto('video_files')
        .values({ video_id: videoId, custom_identifier: null, quality, path: key, created_at: now, content_type: 'video/mp4' })
        .execute();
    }
    await t.database.db.updateTable('videos').set({ status: 'ready' }).where('id', '=', videoId).execute();
  }

  /** Gives a ready video a (fake) HLS ladder: one 360p rung of ten 4 s segments, as the pipeline lays it out. */
  async function makeLadder(videoId: number): Promise<string> {
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const dir = `videos/${uuid}/test/hls`;
    const write = (name: string, body: string) => {
      fs.mkdirSync(path.join(t.config.mediaDir, dir, path.dirname(name)), { recursive: true });
      fs.writeFileSync(path.join(t.config.mediaDir, dir, name), body);
    };
    write('master.m3u8', '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\n360p/index.m3u8\n');
    const segments = Array.from({ length: 10 }, (_, i) => `#EXTINF:4.000000,\nseg-${String(i).padStart(5, '0')}.m4s`);
    write(
      '360p/index.m3u8',
      [
        '#EXTM3U',
        '#EXT-X-VERSION:7',
        '#EXT-X-TARGETDURATION:4',
        '#EXT-X-PLAYLIST-TYPE:VOD',
        '#EXT-X-MAP:URI="init.mp4"',
        ...segments,
        '#EXT-X-ENDLIST',
        '',
      ].join('\n'),
    );
    write('360p/init.mp4', 'init');
    for (let i = 0; i < 10; i++) write(`360p/seg-${String(i).padStart(5, '0')}.m4s`, `segment ${i}`);
    await t.database.db
      .insertInto('video_files')
      .values({
        video_id: videoId,
        custom_identifier: null,
        quality: 'hls',
        path: `${dir}/master.m3u8`,
        created_at: 0,
        content_type: 'application/vnd.apple.mpegurl',
      })
      .execute();
    return dir;
  }

  describe('the share page', () => {
    it('answers the player as HTML with its chapters, safely escaped, and strict headers', async () => {
      const player = await createPlayer(org.api, { name: 'Launch </script><script>alert(1)</script> & more', description: 'About "it"' }, 2);
      const res = await page(`/watch/${player.uuid}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(res.headers['cache-control']).toBe('private, no-store');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toMatch(/frame-ancestors 'self'$/);
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
      expect(res.html).not.toContain('<script>alert(1)');
      expect(res.html).toContain('<title>Launch &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</title>');
      expect(res.html).toContain('<p>About &quot;it&quot;</p>');
      const config = configOf(res.html);
      expect(config.uuid).toBe(player.uuid);
      expect(config.kind).toBe('watch');
      expect(config.chapters.map((c: any) => [c.position, c.name, c.state])).toEqual([
        [0, player.chapters_attributes[0].video_attributes.name, 'processing'],
        [1, player.chapters_attributes[1].video_attributes.name, 'processing'],
      ]);
      expect(res.html).toContain('This video is being processed');
      expect(res.html).toMatch(
        /<link rel="alternate" type="application\/json\+oembed" href="http:\/\/reelbase.test\/dashboard\/v1.1\/oembed\?url=http%3A%2F%2Freelbase.test%2Fwatch%2F[0-9a-f-]+&amp;format=json"/,
      );
      // The nonce of the script tag is the one the policy allows.
      const nonce = /'nonce-([^']+)'/.exec(csp)![1];
      expect(res.html).toContain(`<script src="/web/player.js" nonce="${nonce}"></script>`);
      expect(config.nonce).toBe(nonce);
    });

    it('serves a ready video by signed URLs that play, HD first when the player asks for it, with its published captions', async () => {
      const player = await createPlayer(org.api, { default_hd: true });
      const videoId = player.chapters_attributes[0].video_id;
      await makeReady(videoId);
      const published = await org.api.post(`${P}/videos/${videoId}/captions`, { language: 'en', content: 'WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n' });
      expect(published.status).toBe(201);
      expect((await org.api.patch(`${P}/captions/${published.body.id}/publish`)).status).toBe(200);
      const draft = await org.api.post(`${P}/videos/${videoId}/captions`, { language: 'fr', content: 'WEBVTT\n\n00:00.000 --> 00:01.000\nBonjour\n' });
      expect(draft.status).toBe(201);

      const res = await page(`/watch/${player.uuid}`);
      const [chapter] = configOf(res.html).chapters;
      expect(chapter.state).toBe('ready');
      expect(chapter.sources.map((s: any) => [s.quality, s.type])).toEqual([
        ['hd', 'video/mp4'],
        ['sd', 'video/mp4'],
      ]);
      expect(chapter.captions.map((c: any) => c.srclang)).toEqual(['en']);
      expect(res.html).toContain('<source src="');
      expect(res.html).toContain('<track kind="subtitles"');
      expect(res.html).not.toContain('This video is being processed');
      for (const source of chapter.sources) {
        const file = await t.app.inject({ method: 'GET', url: new URL(source.src).pathname + new URL(source.src).search });
        expect(file.statusCode).toBe(200);
        expect(file.body).toBe(`${source.quality} bytes of ${videoId}`);
      }
      const vtt = await t.app.inject({ method: 'GET', url: new URL(chapter.captions[0].src).pathname + new URL(chapter.captions[0].src).search });
      expect(vtt.statusCode).toBe(200);
      expect(vtt.body).toContain('Hello');
    });

    it("hands the player its public CTAs and events, the organization's defaults on the first chapter, and leaves drafts out", async () => {
      const player = await createPlayer(org.api, {}, 2);
      const [first, second] = player.chapters_attributes;
      const cta = await org.api.post(`${P}/ctas`, {
        chapter_id: second.id,
        second: 3,
        duration: 5,
        width: 250,
        html: '</script><a href="https://example.com">Buy</a>',
      });
      expect(cta.status).toBe(201);
      const postroll = await org.api.post(`${P}/ctas`, { chapter_id: first.id, second: -1, auto_close: false, width: 300, html: 'Thanks for watching' });
      expect(postroll.status).toBe(201);
      const draft = await org.api.post(`${P}/events`, {
        event_type: 'annotation',
        chapter_id: first.id,
        second: 1,
        duration: 2,
        html: 'draft',
        state: 'draft',
      });
      expect(draft.status).toBe(201);
      const orgDefault = await org.api.post(`${P}/ctas`, { second: 0, duration: 4, width: 200, html: 'Everywhere' });
      expect(orgDefault.status).toBe(201);

      const config = configOf((await page(`/watch/${player.uuid}`)).html);
      expect(config.chapters[0].events.map((e: any) => [e.id, e.second])).toEqual([
        [orgDefault.body.id, 0],
        [postroll.body.id, -1],
      ]);
      expect(config.chapters[1].events).toEqual([
        {
          id: cta.body.id,
          event_type: 'simple_overlay',
          second: 3,
          duration: 5,
          auto_close: true,
          closeable: expect.any(Boolean),
          fullscreen: false,
          width: 250,
          html: '</script><a href="https://example.com">Buy</a>',
          background_color: null,
        },
      ]);
      // Another organization's default is not shown.
      const other = await createOrg(t);
      expect((await other.api.post(`${P}/ctas`, { second: 0, duration: 4, width: 200, html: 'Not yours' })).status).toBe(201);
      expect(JSON.stringify(configOf((await page(`/watch/${player.uuid}`)).html))).not.toContain('Not yours');
    });

    it("plays a live instance's broadcast over HLS while it airs, and its recording once ready", async () => {
      const created = await org.api.post(`${P}/organizations/${org.organizationId}/live`, {
        video_options: { video_name: 'Town hall', description: 'Monthly', stream_tags: ['all-hands'] },
      });
      expect(created.status, created.raw).toBe(201);
      expect(created.status).toBe(201);
      const instance = (await org.api.get(`${P}/organizations/${org.organizationId}/live/${created.body.stream_instance_id}`)).body.instance_details;
      // Before it airs: when it will (the player polls the chapters and starts by itself), and no media.
      const airDate = Math.floor(Date.now() / 1000) + 3600;
      await t.database.db
        .updateTable('live_stream_instances')
        .set({ air_date: airDate, dvr_enabled: true })
        .where('id', '=', created.body.stream_instance_id)
        .execute();
      const beforePage = await page(`/watch/${instance.player_uuid}`);
      const before = configOf(beforePage.html);
      expect(before.chapters[0]).toMatchObject({ state: 'upcoming', live: { status: 'unaired', air_date: airDate, dvr: true }, sources: [], hls: null });
      expect(beforePage.html).toContain(`This live broadcast starts at ${new Date(airDate * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC.`);
      const polled = await t.app.inject({ method: 'GET', url: `/watch/${instance.player_uuid}/chapters`, remoteAddress: '203.0.113.7' });
      expect(polled.statusCode).toBe(200);
      expect(polled.headers['cache-control']).toBe('private, no-store');
      expect(polled.json().chapters[0].state).toBe('upcoming');
      await t.database.db.updateTable('live_stream_instances').set({ status: 'live' }).where('id', '=', created.body.stream_instance_id).execute();
      const airing = configOf((await page(`/watch/${instance.player_uuid}`)).html);
      expect((await t.app.inject({ method: 'GET', url: `/embed/${instance.player_uuid}/chapters` })).json().chapters[0]).toMatchObject({
        state: 'live',
        hls: expect.stringMatching(new RegExp(`/play/${instance.player_uuid}/e\\d+\\.[\\w-]{32}/live/index\\.m3u8$`)),
      });
      expect(airing.chapters[0]).toMatchObject({
        state: 'live',
        live: { status: 'live', dvr: true },
        sources: [
          {
            src: expect.stringMatching(new RegExp(`^http://reelbase\\.test/play/${instance.player_uuid}/w\\d+\\.[\\w-]{32}/live/index\\.m3u8$`)),
            type: 'application/vnd.apple.mpegurl',
            quality: 'live',
          },
        ],
      });
      await makeReady(instance.video_id, ['sd']);
      const recorded = configOf((await page(`/watch/${instance.player_uuid}`)).html);
      expect(recorded.chapters[0].state).toBe('ready');
      expect(recorded.chapters[0].sources.map((s: any) => s.type)).toEqual(['video/mp4']);
    });

    it("lists each chapter with its thumbnail and length, the first chapter's thumbnail as the poster", async () => {
      const player = await createPlayer(org.api, {}, 2);
      const [first, second] = player.chapters_attributes.map((c: any) => c.video_id);
      await makeReady(first);
      await makeReady(second);
      await t.database.db.updateTable('videos').set({ seconds: 75 }).where('id', '=', first).execute();
      const { uuid: videoUuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', second).executeTakeFirstOrThrow();
      const key = `videos/${videoUuid}/thumbnails/t1.jpg`;
      fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
      fs.writeFileSync(path.join(t.config.mediaDir, key), 'jpeg');
      const now = Math.floor(Date.now() / 1000);
      await t.database.db
        .insertInto('thumbnails')
        .values({
          organization_id: org.organizationId,
          video_id: second,
          uuid: 'b7c6a1e2-0000-4000-8000-0000000000c2',
          kind: 'generated',
          path: key,
          url: null,
          millisecond: 1000,
          width: 320,
          height: 180,
          selected: true,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const res = await page(`/watch/${player.uuid}`);
      const config = configOf(res.html);
      expect(config.chapters.map((c: any) => [c.duration, c.thumbnail && new URL(c.thumbnail).pathname.replace(/\/play\/[^/]+\/[^/]+/, '')])).toEqual([
        [75, null],
        [null, `/files/${key}`],
      ]);
      expect(res.html).toContain('<span class="rb-duration" aria-hidden="true">1:15</span>');
      expect(res.html).toContain('<span class="rb-sr rb-badge-text">, 1:15</span>');
      expect(res.html).toMatch(
        /<button type="button" data-chapter="1"><span class="rb-thumb"><img src="http:\/\/reelbase\.test\/play\/[^"]+\/files\/videos\/[^"]+\/t1\.jpg" alt=""/,
      );
      // The poster is the first chapter's thumbnail where it has one, else the player's.
      expect(config.poster).toBe(config.chapters[1].thumbnail);
    });

    it('carries the settings the player script needs', async () => {
      const player = await createPlayer(org.api, {
        autoplay: true,
        mute_onload: true,
        color: '#FF0088',
        redirect_url: 'https://example.com/next',
        redirect_whole_page: true,
        playlist_always_open: true,
      });
      const res = await page(`/watch/${player.uuid}`);
      expect(configOf(res.html).settings).toEqual({
        autoplay: true,
        mute_onload: true,
        play_button: expect.any(Boolean),
        splash_screen_fade: false,
        playlist_always_open: true,
        default_hd: false,
        color: 'ff0088',
        playlist_color: null,
        redirect_url: 'https://example.com/next',
        redirect_whole_page: true,
      });
      expect(res.html).toContain('--rb-accent:#ff0088');
      expect(res.html).toMatch(/<video [^>]* muted>/);
    });

    it('shows the share link and embed code only where the player allows them', async () => {
      const open = await createPlayer(org.api, { viral_sharing: true, embed_button: true, sharing_page: true });
      const html = (await page(`/watch/${open.uuid}`)).html;
      expect(html).toContain(`value="http://reelbase.test/watch/${open.uuid}"`);
      expect(html).toContain(`&lt;iframe src=&quot;http://reelbase.test/embed/${open.uuid}&quot;`);
      const closed = await createPlayer(org.api, { viral_sharing: false, embed_button: false });
      const plain = (await page(`/watch/${closed.uuid}`)).html;
      expect(plain).not.toContain('rb-share');
      expect(plain).not.toContain('rb-embed-code');
    });

    it('answers an unknown or malformed address with a 404 page', async () => {
      for (const url of ['/watch/00000000-0000-4000-8000-000000000000', '/watch/not-a-uuid!', '/embed/ffff', `/watch/${'a'.repeat(80)}`]) {
        const res = await page(url);
        expect(res.status, url).toBe(404);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.html).toContain('Video not found');
      }
    });

    it("is refused to an address in the organization's blocked ranges, and only there", async () => {
      const player = await createPlayer(org.api);
      const blocked = await org.api.post(`${P}/blacklisted_ip_ranges`, { ip_range: '198.51.100.0/24' });
      expect(blocked.status).toBe(201);
      expect((await page(`/watch/${player.uuid}`, { ip: '198.51.100.20' })).status).toBe(403);
      expect((await page(`/embed/${player.uuid}`, { ip: '198.51.100.20' })).status).toBe(403);
      expect((await page(`/watch/${player.uuid}`, { ip: '198.51.101.20' })).status).toBe(200);
      const other = await createOrg(t);
      const theirs = await createPlayer(other.api);
      expect((await page(`/watch/${theirs.uuid}`, { ip: '198.51.100.20' })).status).toBe(200);
      expect((await org.api.delete(`${P}/blacklisted_ip_ranges/${blocked.body.id}`)).status).toBe(200);
      expect((await page(`/watch/${player.uuid}`, { ip: '198.51.100.20' })).status).toBe(200);
    });

    it('is not shown before its release date (403) nor after its expiry (410)', async () => {
      const now = Math.floor(Date.now() / 1000);
      const later = await createPlayer(org.api, { release_date: now + 3600 });
      const res = await page(`/watch/${later.uuid}`);
      expect(res.status).toBe(403);
      expect(res.html).toContain('Not released yet');
      const expired = await createPlayer(org.api, { release_date: now - 7200, expiry_date: now - 60 });
      expect((await page(`/watch/${expired.uuid}`)).status).toBe(410);
      expect((await page(`/embed/${expired.uuid}`)).status).toBe(410);
      const running = await createPlayer(org.api, { release_date: now - 7200, expiry_date: now + 3600 });
      expect((await page(`/watch/${running.uuid}`)).status).toBe(200);
    });
  });

  describe('the embed page', () => {
    it('may be framed anywhere by default, and refuses when embedding is disabled', async () => {
      const player = await createPlayer(org.api);
      const res = await page(`/embed/${player.uuid}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-security-policy']).toMatch(/frame-ancestors \*$/);
      expect(configOf(res.html).kind).toBe('embed');
      expect(res.html).toContain('<body class="rb-embed">');
      expect(
        (await t.app.inject({ method: 'DELETE', url: `${P}/players/uuid=${player.uuid}/embed`, headers: { authorization: `Bearer ${org.token}` } })).statusCode,
      ).toBe(200);
      const refused = await page(`/embed/${player.uuid}`);
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('Embedding disabled');
      expect((await page(`/watch/${player.uuid}`)).status).toBe(200);
    });

    it('may only be framed by the allowed domains and their subdomains', async () => {
      const player = await createPlayer(org.api, { whitelisted_embed_domains: ['example.com'] });
      const res = await page(`/embed/${player.uuid}`);
      expect(res.headers['content-security-policy']).toMatch(
        /frame-ancestors 'self' https:\/\/example\.com https:\/\/\*\.example\.com http:\/\/example\.com http:\/\/\*\.example\.com$/,
      );
      expect((await page(`/embed/${player.uuid}`, { headers: { referer: 'https://blog.example.com/post' } })).status).toBe(200);
      expect((await page(`/embed/${player.uuid}`, { headers: { referer: 'https://example.com/' } })).status).toBe(200);
      const elsewhere = await page(`/embed/${player.uuid}`, { headers: { referer: 'https://notexample.com/' } });
      expect(elsewhere.status).toBe(403);
      expect(elsewhere.html).toContain('cannot be embedded on this site');
    });

    it("adds the access manager's domains when they are enabled", async () => {
      const player = await createPlayer(org.api);
      const managers = await org.api.get(`${P}/access_managers?player_id=${player.id}`);
      const manager = managers.body.find((m: any) => m.player_id === player.id);
      expect(
        (await org.api.patch(`${P}/access_managers/${manager.id}`, { whitelisted_domains_enabled: true, whitelisted_domains: ['partner.org'] })).status,
      ).toBe(200);
      expect((await page(`/embed/${player.uuid}`, { headers: { referer: 'https://partner.org/x' } })).status).toBe(200);
      expect((await page(`/embed/${player.uuid}`, { headers: { referer: 'https://other.org/x' } })).status).toBe(403);
    });
  });

  describe('the access code', () => {
    it('asks for the code, refuses a wrong one, and remembers a right one in a cookie until the code changes', async () => {
      const player = await createPlayer(org.api, { access_code: 'open sesame' });
      const asked = await page(`/watch/${player.uuid}`);
      expect(asked.status).toBe(403);
      expect(asked.html).toContain('<form class="rb-code" method="post">');
      expect(asked.html).not.toContain('reelbase-config');

      const wrong = await page(`/watch/${player.uuid}`, { form: { access_code: 'nope' } });
      expect(wrong.status).toBe(403);
      expect(wrong.html).toContain('The access code is not correct.');

      const right = await page(`/watch/${player.uuid}`, { form: { access_code: 'open sesame' } });
      expect(right.status).toBe(303);
      expect(right.headers.location).toBe(`/watch/${player.uuid}`);
      const cookie = String(right.headers['set-cookie']);
      expect(cookie).toMatch(new RegExp(`^reelbase_access_${player.uuid}=[A-Za-z0-9_-]+; Path=/; HttpOnly; Max-Age=2592000; SameSite=Lax$`));
      const pair = cookie.split(';')[0];
      expect((await page(`/watch/${player.uuid}`, { headers: { cookie: pair } })).status).toBe(200);
      expect((await page(`/embed/${player.uuid}`, { headers: { cookie: `other=1; ${pair}` } })).status).toBe(200);
      // A cookie made for another player, or a forged one, opens nothing.
      const other = await createPlayer(org.api, { access_code: 'open sesame' });
      expect((await page(`/watch/${other.uuid}`, { headers: { cookie: pair.replace(player.uuid, other.uuid) } })).status).toBe(403);

      expect((await org.api.patch(`${P}/players/${player.id}`, { access_code: 'new code' })).status).toBe(200);
      expect((await page(`/watch/${player.uuid}`, { headers: { cookie: pair } })).status).toBe(403);
    });

    it("shows the access manager's messages and stops the code after its allowed uses", async () => {
      const player = await createPlayer(org.api, { access_code: 'c0de' });
      const managers = await org.api.get(`${P}/access_managers?player_id=${player.id}`);
      const manager = managers.body.find((m: any) => m.player_id === player.id);
      const patched = await org.api.patch(`${P}/access_managers/${manager.id}`, {
        enabled: true,
        max_access_code_uses: 2,
        custom_denial_message: 'Ask Sam for the code.',
        custom_approval_message: 'Welcome, partner.',
      });
      expect(patched.status).toBe(200);
      expect((await page(`/watch/${player.uuid}`, { form: { access_code: 'bad' } })).html).toContain('Ask Sam for the code.');
      const first = await page(`/watch/${player.uuid}`, { form: { access_code: 'c0de' } });
      expect(first.status).toBe(303);
      const shown = await page(`/watch/${player.uuid}`, { headers: { cookie: String(first.headers['set-cookie']).split(';')[0] } });
      expect(shown.html).toContain('<p class="rb-approval">Welcome, partner.</p>');
      expect((await page(`/watch/${player.uuid}`, { form: { access_code: 'c0de' } })).status).toBe(303);
      const third = await page(`/watch/${player.uuid}`, { form: { access_code: 'c0de' } });
      expect(third.status).toBe(403);
      expect(third.html).toContain('Access code used up');
    });

    it('refuses the form for a while after ten wrong codes from one address', async () => {
      const player = await createPlayer(org.api, { access_code: 'right' });
      for (let i = 0; i < 10; i++) expect((await page(`/watch/${player.uuid}`, { ip: '192.0.2.50', form: { access_code: `wrong ${i}` } })).status).toBe(403);
      const limited = await page(`/watch/${player.uuid}`, { ip: '192.0.2.50', form: { access_code: 'right' } });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(500);
      expect((await page(`/watch/${player.uuid}`, { ip: '192.0.2.51', form: { access_code: 'right' } })).status).toBe(303);
    });

    it('answers a malformed form with a 4xx and grants nothing', async () => {
      const player = await createPlayer(org.api, { access_code: 'right' });
      const tooLong = await page(`/watch/${player.uuid}`, { form: { access_code: 'x'.repeat(300) } });
      expect(tooLong.status).toBeGreaterThanOrEqual(400);
      expect(tooLong.status).toBeLessThan(500);
      const res = await t.app.inject({ method: 'POST', url: `/watch/${player.uuid}`, headers: { 'content-type': 'text/xml' }, payload: '<a/>' });
      expect(res.statusCode).toBe(415);
      expect(res.headers['set-cookie']).toBeUndefined();
    });
  });

  describe('oEmbed', () => {
    const oembed = (url: string, version = 'v1.1', extra = '') => org.api.get(`/dashboard/${version}/oembed?url=${encodeURIComponent(url)}${extra}`);

    it('describes a watch or embed URL, responsive on v1.1 and fixed-size on v1, without a token', async () => {
      const named = await createOrg(t, 'Studio Nord');
      const player = await createPlayer(named.api, { name: 'Demo "day"', width: 1280, height: 720 });
      const anonymous = await t.app.inject({
        method: 'GET',
        url: `/dashboard/v1.1/oembed?url=${encodeURIComponent(`http://reelbase.test/watch/${player.uuid}`)}`,
      });
      expect(anonymous.statusCode).toBe(200);
      const body = JSON.parse(anonymous.body);
      expect(body).toEqual({
        version: '1.0',
        type: 'video',
        provider_name: 'Reelbase',
        provider_url: 'http://reelbase.test',
        title: 'Demo "day"',
        author_name: 'Studio Nord',
        html: `<div style="position:relative;width:100%;max-width:1280px;"><div style="position:relative;padding-top:56.25%;"><iframe src="http://reelbase.test/embed/${player.uuid}" title="Demo &quot;day&quot;" style="position:absolute;top:0;left:0;width:100%;height:100%;border:0;" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe></div></div>`,
        width: 1280,
        height: 720,
      });
      const fixed = await oembed(`http://reelbase.test/embed/${player.uuid}`, 'v1', '&maxwidth=640&maxheight=400');
      expect(fixed.status).toBe(200);
      expect(fixed.body.width).toBe(640);
      expect(fixed.body.height).toBe(360);
      expect(fixed.body.html).toBe(
        `<iframe src="http://reelbase.test/embed/${player.uuid}" width="640" height="360" title="Demo &quot;day&quot;" frameborder="0" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe>`,
      );
      // The root aliases of DESIGN §1.
      const root = await t.app.inject({
        method: 'GET',
        url: `/v1/oembed?url=${encodeURIComponent(`http://reelbase.test/watch/${player.uuid}`)}&maxheight=180`,
      });
      expect(root.statusCode).toBe(200);
      expect(JSON.parse(root.body)).toMatchObject({ width: 320, height: 180 });
      expect(
        (await t.app.inject({ method: 'GET', url: `/dashboard/v1.1/oembed.json?url=${encodeURIComponent(`http://reelbase.test/watch/${player.uuid}`)}` }))
          .statusCode,
      ).toBe(200);
    });

    it("answers URLs that are not this service's pages with 404, XML with 501, and bad parameters with 4xx", async () => {
      const player = await createPlayer(org.api);
      for (const url of [
        `https://elsewhere.example/watch/${player.uuid}`,
        `http://reelbase.test/players/${player.uuid}`,
        'http://reelbase.test/watch/00000000-0000-4000-8000-000000000000',
        'not a url',
        `ftp://reelbase.test/watch/${player.uuid}`,
      ]) {
        const res = await oembed(url);
        expect(res.status, url).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      const xml = await oembed(`http://reelbase.test/watch/${player.uuid}`, 'v1.1', '&format=xml');
      expect(xml.status).toBe(501);
      expect(xml.body.code).toBe('not_implemented');
      expect((await oembed(`http://reelbase.test/watch/${player.uuid}`, 'v1.1', '&format=yaml')).status).toBe(422);
      expect((await oembed(`http://reelbase.test/watch/${player.uuid}`, 'v1.1', '&maxwidth=0')).status).toBeGreaterThanOrEqual(400);
      const missing = await org.api.get('/dashboard/v1/oembed');
      expect(missing.status).toBeGreaterThanOrEqual(400);
      expect(missing.status).toBeLessThan(500);
    });

    it('refuses a player whose embedding is disabled, and names a thumbnail when one is selected', async () => {
      const player = await createPlayer(org.api);
      expect(
        (await t.app.inject({ method: 'DELETE', url: `${P}/players/uuid=${player.uuid}/embed`, headers: { authorization: `Bearer ${org.token}` } })).statusCode,
      ).toBe(200);
      const res = await oembed(`http://reelbase.test/watch/${player.uuid}`);
      expect(res.status).toBe(403);
      const withThumb = await createPlayer(org.api);
      const videoId = withThumb.chapters_attributes[0].video_id;
      const { uuid: videoUuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
      const now = Math.floor(Date.now() / 1000);
      const thumbnail = (path: string | null, uuid: string) => ({
        organization_id: org.organizationId,
        video_id: videoId,
        uuid,
        kind: 'custom',
        path,
        url: 'https://images.example.com/t.jpg',
        millisecond: null,
        width: 1280,
        height: 720,
        selected: true,
        created_at: now,
        updated_at: now,
      });
      // A custom thumbnail whose image was not copied into the store is never shown: its URL may name any address.
      await t.database.db.insertInto('thumbnails').values(thumbnail(null, 'b7c6a1e2-0000-4000-8000-000000000001')).execute();
      const remoteOnly = await oembed(`http://reelbase.test/watch/${withThumb.uuid}`, 'v1.1', '&maxwidth=320');
      expect(remoteOnly.body.thumbnail_url).toBeUndefined();
      expect((await page(`/watch/${withThumb.uuid}`)).html).not.toContain('images.example.com');
      // Once stored, it is the poster, fetched with a playback grant like the rest of the page's media.
      const key = `videos/${videoUuid}/thumbnails/custom.jpg`;
      fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
      fs.writeFileSync(path.join(t.config.mediaDir, key), 'jpeg bytes');
      await t.database.db.updateTable('thumbnails').set({ path: key }).where('uuid', '=', 'b7c6a1e2-0000-4000-8000-000000000001').execute();
      const described = await oembed(`http://reelbase.test/watch/${withThumb.uuid}`, 'v1.1', '&maxwidth=320');
      expect(described.body).toMatchObject({
        thumbnail_url: expect.stringMatching(new RegExp(`^http://reelbase\\.test/play/${withThumb.uuid}/e\\d+\\.[\\w-]{32}/files/${key}$`)),
        thumbnail_width: 320,
        thumbnail_height: 180,
        width: 320,
        height: 180,
      });
      const image = new URL(described.body.thumbnail_url);
      const fetched = await t.app.inject({ method: 'GET', url: image.pathname });
      expect(fetched.statusCode).toBe(200);
      expect(fetched.body).toBe('jpeg bytes');
      const html = (await page(`/watch/${withThumb.uuid}`)).html;
      expect(html).toMatch(new RegExp(`poster="http://reelbase\\.test/play/${withThumb.uuid}/w\\d+\\.[\\w-]{32}/files/${key}"`));
      // Link previews and search engines get the stable address, which checks the rules at each fetch.
      expect(html).toContain(`<meta property="og:image" content="http://reelbase.test/posters/${withThumb.uuid}">`);
      expect(html).toContain(`<meta property="og:video" content="http://reelbase.test/embed/${withThumb.uuid}">`);
      const ld = JSON.parse(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec(html)![1]);
      expect(ld).toMatchObject({
        '@context': 'https://schema.org',
        '@type': 'VideoObject',
        url: `http://reelbase.test/watch/${withThumb.uuid}`,
        embedUrl: `http://reelbase.test/embed/${withThumb.uuid}`,
        thumbnailUrl: `http://reelbase.test/posters/${withThumb.uuid}`,
      });
      expect(new Date(ld.uploadDate).getTime()).toBeGreaterThan(0);
      const stable = await t.app.inject({ method: 'GET', url: `/posters/${withThumb.uuid}`, remoteAddress: '203.0.113.7' });
      expect(stable.statusCode).toBe(200);
      expect(stable.body).toBe('jpeg bytes');
    });
  });

  describe('the email gate', () => {
    async function webhookBodies(uuid: string) {
      return (await t.database.db.selectFrom('jobs').select('payload').where('type', '=', 'webhook.notify').orderBy('id').execute())
        .map((j) => JSON.parse(j.payload).body)
        .filter((b) => b.player_uuid === uuid);
    }
    const gatePost = (kind: string, uuid: string, body: Record<string, unknown>, headers: Record<string, string> = {}, ip = '203.0.113.7') =>
      t.app.inject({ method: 'POST', url: `/${kind}/${uuid}/gate`, remoteAddress: ip, headers: { 'user-agent': BROWSER_UA, ...headers }, payload: body });
    const given = (email: string, chapter = 0) => ({ email, chapter, player_load_id: 'load-1', visitor_uuid: 'visitor-1' });

    it('keeps the media of the chapters behind it out of the page until an address is given, then answers them and remembers it', async () => {
      const player = await createPlayer(org.api, {}, 2);
      for (const chapter of player.chapters_attributes) await makeReady(chapter.video_id);
      const videoId = player.chapters_attributes[0].video_id;
      const caption = await org.api.post(`${P}/videos/${videoId}/captions`, { language: 'en', content: 'WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n' });
      expect((await org.api.patch(`${P}/captions/${caption.body.id}/publish`)).status).toBe(200);
      const gate = await org.api.post(`${P}/ctas/default_email_gate`, {
        chapter_id: player.chapters_attributes[0].id,
        is_closeable: false,
        is_new_contact: false,
      });
      expect(gate.status).toBe(201);
      expect((await org.api.post(`${P}/organizations/${org.organizationId}/webhooks/analytics`, { url: 'https://hooks.example.com/analytics' })).status).toBe(
        201,
      );

      for (const kind of ['watch', 'embed']) {
        const res = await page(`/${kind}/${player.uuid}`);
        expect(res.status).toBe(200);
        // No address of any of the gated media: files, playlists, captions.
        expect(res.html).not.toMatch(/\/files\/videos\/|\.mp4|\.m3u8|\/captions\/|<source|<track/);
        const config = configOf(res.html);
        expect(config.emailGate).toEqual({ passed: false });
        expect(config.chapters.map((c: any) => [c.state, c.gated, c.sources, c.hls, c.captions])).toEqual([
          ['ready', true, [], null, []],
          ['ready', true, [], null, []],
        ]);
        expect(config.chapters[0].events.map((e: any) => e.event_type)).toContain('simple_email');
        const chapters = await t.app.inject({ method: 'GET', url: `/${kind}/${player.uuid}/chapters`, remoteAddress: '203.0.113.7' });
        expect(JSON.stringify(chapters.json())).not.toMatch(/\.mp4|\.m3u8|\/captions\//);
      }

      expect((await gatePost('watch', player.uuid, given('not an address'))).statusCode).toBe(422);
      expect((await gatePost('watch', player.uuid, { email: 'a@example.com' })).statusCode).toBe(422);
      const passed = await gatePost('watch', player.uuid, given('Viewer@Example.com'));
      expect(passed.statusCode, passed.body).toBe(200);
      expect(passed.headers['cache-control']).toBe('private, no-store');
      const cookie = String(passed.headers['set-cookie']);
      expect(cookie).toMatch(new RegExp(`^reelbase_gate_${player.uuid}=[\\w-]+; Path=/; HttpOnly; SameSite=Lax$`));
      const answer = passed.json();
      expect(answer.emailGate).toEqual({ passed: true });
      expect(answer.chapters.map((c: any) => [c.gated, c.sources.map((s: any) => s.quality)])).toEqual([
        [false, ['sd', 'hd']],
        [false, ['sd', 'hd']],
      ]);
      expect(answer.chapters[0].captions.map((c: any) => c.srclang)).toEqual(['en']);
      // The answered media plays: the grant in it is the watch page's.
      const file = new URL(answer.chapters[1].sources[0].src);
      expect((await t.app.inject({ method: 'GET', url: file.pathname, remoteAddress: '203.0.113.7' })).statusCode).toBe(200);
      // The address reached the analytics webhooks as an identified view of the chapter.
      const identified = (await webhookBodies(player.uuid)).filter((b) => b.type === 'identified_view');
      expect(identified.map((b) => [b.email, b.video_id, b.visitor_vidyard_uuid])).toEqual([['viewer@example.com', videoId, 'visitor-1']]);

      // With the cookie the page has every chapter's media; a forged one changes nothing.
      const again = await page(`/watch/${player.uuid}`, { headers: { cookie: cookie.split(';')[0] } });
      expect(configOf(again.html).emailGate).toEqual({ passed: true });
      expect(configOf(again.html).chapters.every((c: any) => !c.gated && c.sources.length === 2)).toBe(true);
      expect(again.html).toContain('<source src="');
      const forged = await page(`/watch/${player.uuid}`, { headers: { cookie: `reelbase_gate_${player.uuid}=forged` } });
      expect(configOf(forged.html).chapters.every((c: any) => c.gated && c.sources.length === 0)).toBe(true);
      // Another player's cookie does not pass this one's gate.
      const other = await createPlayer(org.api);
      await makeReady(other.chapters_attributes[0].video_id);
      await org.api.post(`${P}/ctas/default_email_gate`, { chapter_id: other.chapters_attributes[0].id, is_closeable: false, is_new_contact: false });
      const crossed = cookie.split(';')[0].replace(player.uuid, other.uuid);
      expect(configOf((await page(`/watch/${other.uuid}`, { headers: { cookie: crossed } })).html).chapters[0].gated).toBe(true);

      // Through the embed page, the answer carries embed grants.
      const embedded = await gatePost('embed', player.uuid, given('fan@example.com', 1));
      expect(embedded.statusCode).toBe(200);
      expect(embedded.json().chapters[0].sources[0].src).toMatch(/\/play\/[0-9a-f-]+\/e\d+\./);
    });

    it('lets the gated chapter play up to a later gate, and holds back only the chapters after it', async () => {
      const player = await createPlayer(org.api, {}, 3);
      for (const chapter of player.chapters_attributes) await makeReady(chapter.video_id, ['sd']);
      const event = await createEmailGate(org.api, player.chapters_attributes[1].id, 30);
      expect(event.status, event.raw).toBe(201);
      const config = configOf((await page(`/watch/${player.uuid}`)).html);
      // Without a ladder the gate's own chapter cannot be cut: nothing of it before the gate either.
      expect(config.chapters.map((c: any) => [c.gated, c.gatedAt, c.sources.length])).toEqual([
        [false, null, 1],
        [true, null, 0],
        [true, null, 0],
      ]);
      // A gate that may be skipped holds nothing back (it is still a gate: the page says so, and its POST works).
      const skippable = await createPlayer(org.api);
      await makeReady(skippable.chapters_attributes[0].video_id, ['sd']);
      await org.api.post(`${P}/ctas/default_email_gate`, { chapter_id: skippable.chapters_attributes[0].id, is_closeable: true, is_new_contact: false });
      const open = configOf((await page(`/watch/${skippable.uuid}`)).html);
      expect(open.emailGate).toEqual({ passed: false });
      expect(open.chapters[0]).toMatchObject({ gated: false, sources: [expect.objectContaining({ quality: 'sd' })] });
      expect((await gatePost('watch', skippable.uuid, given('a@example.com'))).statusCode).toBe(200);
    });

    it('cuts the stream of a chapter whose gate opens at a later second there, and its grant admits nothing past it', async () => {
      const player = await createPlayer(org.api, {}, 3);
      const dirs: string[] = [];
      for (const chapter of player.chapters_attributes) {
        await makeReady(chapter.video_id, ['sd']);
        dirs.push(await makeLadder(chapter.video_id));
      }
      const videos = await t.database.db.selectFrom('videos').select(['id', 'uuid']).execute();
      const uuidOf = (id: number) => videos.find((v) => v.id === id)!.uuid;
      const [first, cut, behind] = player.chapters_attributes.map((c: any) => uuidOf(c.video_id));
      await createEmailGate(org.api, player.chapters_attributes[1].id, 30);
      const config = configOf((await page(`/watch/${player.uuid}`)).html);
      expect(config.chapters.map((c: any) => [c.gated, c.gatedAt, c.sources.length, Boolean(c.hls)])).toEqual([
        [false, null, 1, true],
        [false, 30, 0, true],
        [true, null, 0, false],
      ]);
      // The page's grant says its viewer is short of the gate.
      const base = /^(http:\/\/reelbase\.test\/play\/[0-9a-f-]+\/wg\d+\.[\w-]{32})\/files\//
        .exec(config.chapters[1].hls)![1]
        .replace('http://reelbase.test', '');
      const get = (key: string) => t.app.inject({ method: 'GET', url: `${base}/files/${key}`, remoteAddress: '203.0.113.7' });
      const rung = await get(`${dirs[1]}/360p/index.m3u8`);
      expect(rung.statusCode).toBe(200);
      // Segments up to the one playing second 30 (28–32 s), then the end.
      expect(rung.body).toMatch(/seg-00007\.m4s\n#EXT-X-ENDLIST\n$/);
      expect(rung.body).not.toContain('seg-00008');
      expect((await get(`${dirs[1]}/master.m3u8`)).statusCode).toBe(200);
      expect((await get(`${dirs[1]}/360p/init.mp4`)).statusCode).toBe(200);
      expect((await get(`${dirs[1]}/360p/seg-00007.m4s`)).body).toBe('segment 7');
      // Past the gate, its MP4 file, and the held-back chapter, even by a key read elsewhere: nothing.
      for (const key of [
        `${dirs[1]}/360p/seg-00008.m4s`,
        `videos/${cut}/test/sd.mp4`,
        `videos/${behind}/test/sd.mp4`,
        `${dirs[2]}/master.m3u8`,
        `${dirs[2]}/360p/seg-00000.m4s`,
      ]) {
        expect((await get(key)).statusCode, key).toBe(404);
      }
      // The chapter before the gate: whole.
      expect((await get(`${dirs[0]}/360p/index.m3u8`)).body).toContain('seg-00009.m4s');
      expect((await get(`videos/${first}/test/sd.mp4`)).statusCode).toBe(200);
      // A grant forged from the gated one (the flag dropped) is refused.
      const forged = base.replace('/wg', '/w');
      expect((await t.app.inject({ method: 'GET', url: `${forged}/files/${dirs[2]}/master.m3u8`, remoteAddress: '203.0.113.7' })).statusCode).toBe(403);

      // Once the gate is passed, the answer has every chapter whole, through a grant that admits it all.
      const passed = await gatePost('watch', player.uuid, given('viewer@example.com', 1));
      expect(passed.statusCode).toBe(200);
      const answer = passed.json();
      expect(answer.chapters.map((c: any) => [c.gated, c.gatedAt, c.sources.length])).toEqual([
        [false, null, 1],
        [false, null, 1],
        [false, null, 1],
      ]);
      const open = new URL(answer.chapters[1].hls).pathname.replace(/\/files\/.*$/, '');
      expect(open).toMatch(/\/w\d+\./);
      const whole = await t.app.inject({ method: 'GET', url: `${open}/files/${dirs[1]}/360p/index.m3u8`, remoteAddress: '203.0.113.7' });
      expect(whole.body).toContain('seg-00009.m4s');
      expect((await t.app.inject({ method: 'GET', url: `${open}/files/${dirs[2]}/360p/seg-00000.m4s`, remoteAddress: '203.0.113.7' })).statusCode).toBe(200);
    });

    it("applies the page's rules, and answers 404 for a player without a gate", async () => {
      const plain = await createPlayer(org.api);
      await makeReady(plain.chapters_attributes[0].video_id);
      expect((await gatePost('watch', plain.uuid, given('a@example.com'))).statusCode).toBe(404);
      expect((await gatePost('watch', '00000000-0000-4000-8000-000000000000', given('a@example.com'))).statusCode).toBe(404);

      const player = await createPlayer(org.api, { access_code: 'letmein' });
      await makeReady(player.chapters_attributes[0].video_id);
      expect(
        (await org.api.post(`${P}/ctas/default_email_gate`, { chapter_id: player.chapters_attributes[0].id, is_closeable: false, is_new_contact: false }))
          .status,
      ).toBe(201);
      // Behind an access code: not without its cookie.
      expect((await gatePost('watch', player.uuid, given('a@example.com'))).statusCode).toBe(403);
      const granted = await page(`/watch/${player.uuid}`, { form: { access_code: 'letmein' } });
      const access = String(granted.headers['set-cookie']).split(';')[0];
      expect((await gatePost('watch', player.uuid, given('a@example.com'), { cookie: access })).statusCode).toBe(200);
      // Embedding disabled: not through the embed page.
      expect(
        (await t.app.inject({ method: 'DELETE', url: `${P}/players/uuid=${player.uuid}/embed`, headers: { authorization: `Bearer ${org.token}` } })).statusCode,
      ).toBe(200);
      expect((await gatePost('embed', player.uuid, given('a@example.com'), { cookie: access })).statusCode).toBe(403);
      // A blocked address: nothing.
      const blocked = await org.api.post(`${P}/blacklisted_ip_ranges`, { ip_range: '198.51.102.0/24' });
      expect(blocked.status).toBe(201);
      expect((await gatePost('watch', player.uuid, given('a@example.com'), { cookie: access }, '198.51.102.9')).statusCode).toBe(403);
      expect((await org.api.delete(`${P}/blacklisted_ip_ranges/${blocked.body.id}`)).status).toBe(200);
    });
  });

  it('serves the player script, its styles and hls.js, and nothing else under /web', async () => {
    const js = await t.app.inject({ method: 'GET', url: '/web/player.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toContain('reelbase-config');
    const css = await t.app.inject({ method: 'GET', url: '/web/player.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const hls = await t.app.inject({ method: 'GET', url: '/web/hls.js' });
    expect(hls.statusCode).toBe(200);
    expect(hls.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(hls.body).toContain('Hls');
    // The full build: subtitle renditions need it.
    expect(hls.body).toContain('subtitleTracks');
    const chrome = await t.app.inject({ method: 'GET', url: '/web/media-chrome.js' });
    expect(chrome.statusCode).toBe(200);
    expect(chrome.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(chrome.body).toContain('media-controller');
    for (const url of ['/web/pages.ts', '/web/..%2Fapp.ts', '/web/']) expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(404);
  });

  it('answers /share/:uuid, the share link reference clients build, with a permanent redirect to the watch page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/share/0b6f5c1e-0000-4000-8000-000000000042' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/watch/0b6f5c1e-0000-4000-8000-000000000042');
  });

  it('answers /favicon.ico, which every browser asks for', async () => {
    const icon = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.body).toContain('<svg');
  });
});
