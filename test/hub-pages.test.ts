import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const P = '/dashboard/v1';
const VIEWER = '203.0.113.7';

/** Well-formedness by libxml2 (Debian's libxml2-utils, installed by .ci/run). */
function xmllint(xml: string): void {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-hub-')), 'sitemap.xml');
  fs.writeFileSync(file, xml);
  execFileSync('xmllint', ['--noout', file], { stdio: 'pipe' });
}

describe.each(dialects)('hub pages and the video sitemap (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let hub: { id: number; slug: string };
  const watchable: string[] = [];
  const hidden: string[] = [];

  const get = (url: string, ip = VIEWER) => t.app.inject({ method: 'GET', url, remoteAddress: ip });

  /** A player whose video is ready, with an sd file and a poster in the store. */
  async function readyPlayer(name: string, overrides: Record<string, unknown> = {}, ready = true) {
    const player = await createPlayer(org.api, { name, ...overrides });
    const videoId = player.chapters_attributes[0].video_id;
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const now = Math.floor(Date.now() / 1000);
    const poster = `videos/${uuid}/thumbnails/0.jpg`;
    fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(poster)), { recursive: true });
    fs.writeFileSync(path.join(t.config.mediaDir, poster), 'jpeg');
    await t.database.db
      .insertInto('thumbnails')
      .values({
        organization_id: org.organizationId,
        video_id: videoId,
        uuid: `${uuid.slice(0, 30)}-p`,
        kind: 'generated',
        path: poster,
        url: null,
        millisecond: 0,
        width: 640,
        height: 360,
        selected: true,
        created_at: now,
        updated_at: now,
      })
      .execute();
    if (ready) await t.database.db.updateTable('videos').set({ status: 'ready', seconds: 75 }).where('id', '=', videoId).execute();
    return player;
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    const players = [];
    for (let i = 0; i < 5; i++) {
      const p = await readyPlayer(`Watchable <${i}> & more`, { description: `Episode ${i}` });
      watchable.push(p.uuid);
      players.push(p);
    }
    const future = await readyPlayer('Not released', { release_date: now + 86_400 });
    const expired = await readyPlayer('Expired', { expiry_date: now - 10 });
    const coded = await readyPlayer('Behind a code', { access_code: 'sesame' });
    const noEmbed = await readyPlayer('No embedding');
    expect((await org.api.delete(`${P}/players/uuid=${noEmbed.uuid}/embed`)).status).toBe(200);
    const processing = await readyPlayer('Still processing', {}, false);
    for (const p of [future, expired, coded, noEmbed, processing]) hidden.push(p.uuid);
    const created = await org.api.post(`${P}/hubs`, { name: 'Customer stories', description: 'Teams <on> video' });
    expect(created.status, created.raw).toBe(201);
    hub = created.body;
    const ids = (list: Array<{ id: number }>) => list.map((p) => p.id);
    const categories = [
      { name: 'Launch', player_ids: [...ids(players.slice(0, 2)), future.id, expired.id] },
      { name: 'Deep dives', player_ids: [...ids(players.slice(2, 4)), coded.id, noEmbed.id] },
      { name: 'Extras', player_ids: [players[4].id, processing.id, players[0].id] },
    ];
    for (const c of categories) expect((await org.api.post(`${P}/hubs/${hub.id}/categories`, c)).status).toBe(201);
  });
  afterAll(() => t.close());

  it('the hub page: its categories in order, a card per watchable player linking its watch page, nothing else', async () => {
    const res = await get(`/hubs/${hub.slug}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
    const html = res.body;
    expect(html).toContain('Teams &lt;on&gt; video');
    expect([...html.matchAll(/<h2><a href="[^"]+">([^<]+)<\/a><\/h2>/g)].map((m) => m[1])).toEqual(['Launch', 'Deep dives', 'Extras']);
    for (const uuid of watchable) expect(html).toContain(`href="http://reelbase.test/watch/${uuid}"`);
    for (const uuid of hidden) expect(html).not.toContain(uuid);
    expect(html).toContain('Watchable &lt;0&gt; &amp; more');
    expect(html).not.toContain('<script>');
    expect(html).toContain(`<img src="http://reelbase.test/posters/${watchable[0]}"`);
    expect(html).toContain('<span>1:15</span>');
    const ld = JSON.parse(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec(html)![1]);
    expect(ld['@type']).toBe('ItemList');
    expect(ld.itemListElement.map((i: any) => i.item.url)).toEqual(watchable.map((u) => `http://reelbase.test/watch/${u}`));
    // The card's poster is served at its stable address.
    expect((await get(`/posters/${watchable[0]}`)).statusCode).toBe(200);
  });

  it('one category has its own page; unknown categories, unknown and private hubs are 404; blocked networks 403', async () => {
    const category = await get(`/hubs/${hub.slug}/deep-dives`);
    expect(category.statusCode).toBe(200);
    expect(category.body).toContain(watchable[2]);
    expect(category.body).not.toContain(watchable[0]);
    expect((await get(`/hubs/${hub.slug}/no-such-category`)).statusCode).toBe(404);
    expect((await get('/hubs/no-such-hub')).statusCode).toBe(404);
    const hidden = await org.api.post(`${P}/hubs`, { name: 'Internal', public: false });
    expect((await get(`/hubs/${hidden.body.slug}`)).statusCode).toBe(404);
    expect((await get(`/hubs/${hidden.body.slug}/sitemap.xml`)).statusCode).toBe(404);
    expect((await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'lab', ip_range: '198.51.100.0/24' })).status).toBe(201);
    expect((await get(`/hubs/${hub.slug}`, '198.51.100.9')).statusCode).toBe(403);
  });

  it('the sitemap is well-formed, with the sitemap and video namespaces, and lists exactly the watchable players', async () => {
    const url = (await org.api.get(`${P}/hubs/${hub.id}/sitemap`)).body.url;
    expect(url).toBe(`http://reelbase.test/hubs/${hub.slug}/sitemap.xml`);
    const res = await get(new URL(url).pathname);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    const xml = res.body;
    xmllint(xml);
    expect(xml).toContain('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">');
    const locs = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(locs.sort()).toEqual(watchable.map((u) => `http://reelbase.test/watch/${u}`).sort());
    expect(xml).toContain(`<video:player_loc>http://reelbase.test/embed/${watchable[0]}</video:player_loc>`);
    expect(xml).toContain(`<video:thumbnail_loc>http://reelbase.test/posters/${watchable[0]}</video:thumbnail_loc>`);
    expect(xml).toContain('<video:title>Watchable &lt;0&gt; &amp; more</video:title>');
    expect(xml).toContain('<video:duration>75</video:duration>');
    expect(xml).toMatch(/<video:publication_date>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00<\/video:publication_date>/);
  });
});
