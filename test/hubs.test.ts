import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, unique, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const HUB_KEYS = ['category_count', 'created_at', 'description', 'id', 'name', 'public', 'slug', 'updated_at', 'url'];
const CATEGORY_KEYS = ['created_at', 'hub_id', 'id', 'name', 'player_ids', 'position', 'slug', 'updated_at'];

/** A slug no other test (or earlier run on the same server) uses. */
const freshSlug = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

describe.each(dialects)('hubs on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(() => t.close());

  const createHub = async (api = org.api, body: Record<string, unknown> = {}) => {
    const res = await api.post(`${P}/hubs`, { name: unique('Hub'), ...body });
    expect(res.status, res.raw).toBe(201);
    return res.body;
  };
  const names = (xs: Array<{ name: string }>) => xs.map((x) => x.name);

  describe('hubs CRUD', () => {
    it('creates (201) with exactly the Hub fields, defaults, url and epoch seconds; reads, changes and deletes', async () => {
      const before = Math.floor(Date.now() / 1000);
      const slug = freshSlug('crud');
      const res = await org.api.post(`${P}/hubs`, { name: '  My Hub  ', slug });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(HUB_KEYS);
      expect(res.body).toMatchObject({ name: 'My Hub', slug, description: null, public: true, category_count: 0, url: `http://reelbase.test/hubs/${slug}` });
      expect(res.body.created_at).toBeGreaterThanOrEqual(before - 1);
      expect(res.body.updated_at).toBe(res.body.created_at);
      const id = res.body.id;

      expect((await org.api.get(`${P}/hubs/${id}`)).body).toEqual(res.body);

      const patched = await org.api.patch(`${P}/hubs/${id}`, { name: 'Renamed', description: 'About', public: false });
      expect(patched.status).toBe(200);
      // A new name keeps the slug (the public address stays).
      expect(patched.body).toMatchObject({ name: 'Renamed', slug, description: 'About', public: false });
      const slug2 = freshSlug('moved');
      const moved = await org.api.patch(`${P}/hubs/${id}`, { slug: slug2, description: null });
      expect(moved.body).toMatchObject({ slug: slug2, description: null, url: `http://reelbase.test/hubs/${slug2}` });

      const deleted = await org.api.delete(`${P}/hubs/${id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual(moved.body);
      expect((await org.api.get(`${P}/hubs/${id}`)).status).toBe(404);
      expect((await org.api.delete(`${P}/hubs/${id}`)).status).toBe(404);
    });

    it('accepts the wrapped body and the .json suffix', async () => {
      const res = await org.api.post(`${P}/hubs.json`, { hub: { name: unique('Wrapped'), public: false, description: 'd' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ public: false, description: 'd' });
      const read = await org.api.get(`${P}/hubs/${res.body.id}.json`);
      expect(read.status).toBe(200);
      expect(read.body.id).toBe(res.body.id);
      const patched = await org.api.patch(`${P}/hubs/${res.body.id}.json`, { hub: { name: 'Wrapped again' } });
      expect(patched.body.name).toBe('Wrapped again');
    });

    it('validates the fields (422 naming them)', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ name: 'ok', slug: 'Upper' }, 'slug'],
        [{ name: 'ok', slug: 'double--dash' }, 'slug'],
        [{ name: 'ok', slug: '-lead' }, 'slug'],
        [{ name: 'ok', slug: '' }, 'slug'],
        [{ name: 'ok', slug: 'a'.repeat(101) }, 'slug'],
        [{ name: 'ok', description: 'd'.repeat(5001) }, 'description'],
        [{ name: 'ok', public: 'yes' }, 'public'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.post(`${P}/hubs`, body);
        expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      expect((await org.api.post(`${P}/hubs`, { name: 'n'.repeat(255), slug: freshSlug('a'.repeat(80)), description: 'd'.repeat(5000) })).status).toBe(201);
    });
  });

  describe('slugs', () => {
    it('derives the slug from the name (lower-case, accents stripped, dashes) and suffixes -2, -3 when taken', async () => {
      const word = `Caf${Math.random().toString(36).slice(2, 8)}`;
      const a = await createHub(org.api, { name: `  Crème ${word} — Été!! ` });
      const base = `creme-${word.toLowerCase()}-ete`;
      expect(a.slug).toBe(base);
      // Across the server: another organization's derived slug is suffixed too.
      const b = await createHub(other.api, { name: `Crème ${word} Été` });
      expect(b.slug).toBe(`${base}-2`);
      const c = await createHub(org.api, { name: `crème ${word} été` });
      expect(c.slug).toBe(`${base}-3`);
      // A name with nothing to keep falls back to "hub".
      const d = await createHub(org.api, { name: '日本語 !!!' });
      expect(d.slug).toMatch(/^hub(-\d+)?$/);
      // Long names are cut to 100 characters, with room for a suffix.
      const long = `L${Math.random().toString(36).slice(2, 8)}`.repeat(30);
      const e = await createHub(org.api, { name: long });
      const f = await createHub(org.api, { name: long });
      expect(e.slug).toHaveLength(100);
      expect(f.slug).toHaveLength(100);
      expect(f.slug.endsWith('-2')).toBe(true);
    });

    it('refuses an explicit slug taken anywhere on the server (422 naming slug)', async () => {
      const slug = freshSlug('taken');
      const mine = await createHub(org.api, { slug });
      for (const api of [org.api, other.api]) {
        const res = await api.post(`${P}/hubs`, { name: 'x', slug });
        expect(res.status).toBe(422);
        expect(res.body.details).toEqual([{ field: 'slug', message: 'has already been taken' }]);
      }
      const second = await createHub(org.api);
      const clash = await org.api.patch(`${P}/hubs/${second.id}`, { slug });
      expect(clash.status).toBe(422);
      expect(clash.body.details[0].field).toBe('slug');
      // Its own slug again is no clash.
      expect((await org.api.patch(`${P}/hubs/${mine.id}`, { slug })).status).toBe(200);
    });

    it('answers a unique-violation race with 422, never 500', async () => {
      const slug = freshSlug('race');
      const results = await Promise.all(Array.from({ length: 6 }, () => org.api.post(`${P}/hubs`, { name: 'race', slug })));
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 201)) {
        expect(r.status).toBe(422);
        expect(r.body.details[0].field).toBe('slug');
      }
    });
  });

  describe('GET /v1/hubs', () => {
    it('answers a bare array without per_page, the envelope with it (count is the total), and CSV', async () => {
      const o = await createOrg(t);
      const hubs = [];
      for (let i = 0; i < 3; i++) hubs.push(await createHub(o.api, { name: `List ${i} ${unique('h')}` }));
      const bare = await o.api.get(`${P}/hubs`);
      expect(bare.status).toBe(200);
      expect(Array.isArray(bare.body)).toBe(true);
      expect(bare.body.map((h: { id: number }) => h.id)).toEqual(hubs.map((h) => h.id));

      const paged = await o.api.get(`${P}/hubs?per_page=2&page=2`);
      expect(Object.keys(paged.body).sort()).toEqual(['hubs', 'summary']);
      expect(paged.body.hubs.map((h: { id: number }) => h.id)).toEqual([hubs[2].id]);
      expect(paged.body.summary).toEqual({ page: 2, per_page: 2, count: 3 });

      expect((await o.api.get(`${P}/hubs.json?per_page=1`)).body.summary.count).toBe(3);

      const csv = await o.api.get(`${P}/hubs`, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect(String(csv.headers['content-type'])).toContain('text/csv');
      expect(csv.raw.split('\n')[0]).toContain('slug');
      for (const h of hubs) expect(csv.raw).toContain(h.slug);

      // Only the organization's own hubs.
      expect((await other.api.get(`${P}/hubs`)).body.map((h: { id: number }) => h.id)).not.toContain(hubs[0].id);
    });
  });

  describe('categories', () => {
    it('creates with exactly the Category fields, derives slugs unique within the hub, keeps player order', async () => {
      const hub = await createHub();
      const p1 = await createPlayer(org.api);
      const p2 = await createPlayer(org.api);
      const res = await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: ' Top Picks ', player_ids: [p2.id, p1.id, p2.id] });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(CATEGORY_KEYS);
      expect(res.body).toMatchObject({ hub_id: hub.id, name: 'Top Picks', slug: 'top-picks', position: 0, player_ids: [p2.id, p1.id] });

      const again = await org.api.post(`${P}/hubs/${hub.id}/categories.json`, { category: { name: 'top picks' } });
      expect(again.status).toBe(201);
      expect(again.body.slug).toBe('top-picks-2');
      // Another hub may use the same slug.
      const hub2 = await createHub();
      expect((await org.api.post(`${P}/hubs/${hub2.id}/categories`, { name: 'Top picks' })).body.slug).toBe('top-picks');

      const clash = await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'x', slug: 'top-picks' });
      expect(clash.status).toBe(422);
      expect(clash.body.details).toEqual([{ field: 'slug', message: 'has already been taken' }]);
      const patchClash = await org.api.patch(`${P}/hubs/${hub.id}/categories/${again.body.id}`, { slug: 'top-picks' });
      expect(patchClash.status).toBe(422);

      expect((await org.api.get(`${P}/hubs/${hub.id}`)).body.category_count).toBe(2);

      const patched = await org.api.patch(`${P}/hubs/${hub.id}/categories/${res.body.id}`, { category: { name: 'Renamed', player_ids: [p1.id] } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: 'Renamed', slug: 'top-picks', player_ids: [p1.id] });
    });

    it('keeps positions dense 0..n-1: inserts, moves (clamped) and closes gaps on delete', async () => {
      const hub = await createHub();
      const add = async (name: string, position?: number) => (await org.api.post(`${P}/hubs/${hub.id}/categories`, { name, position })).body;
      const a = await add('A');
      const b = await add('B');
      await add('C', 0);
      await add('D', 99);
      await add('E', 2);
      const order = async () => {
        const list = (await org.api.get(`${P}/hubs/${hub.id}/categories`)).body;
        expect(list.map((c: { position: number }) => c.position)).toEqual(list.map((_: unknown, i: number) => i));
        return names(list).join('');
      };
      expect(await order()).toBe('CAEBD');
      expect((await org.api.patch(`${P}/hubs/${hub.id}/categories/${b.id}`, { position: 0 })).body.position).toBe(0);
      expect(await order()).toBe('BCAED');
      expect((await org.api.patch(`${P}/hubs/${hub.id}/categories/${b.id}`, { position: 1000 })).body.position).toBe(4);
      expect(await order()).toBe('CAEDB');
      const removed = await org.api.delete(`${P}/hubs/${hub.id}/categories/${a.id}`);
      expect(removed.status).toBe(200);
      expect(removed.body.name).toBe('A');
      expect(await order()).toBe('CEDB');
      expect((await org.api.get(`${P}/hubs/${hub.id}/categories/${a.id}`)).status).toBe(404);
      expect((await org.api.delete(`${P}/hubs/${hub.id}/categories/${a.id}`)).status).toBe(404);

      const paged = await org.api.get(`${P}/hubs/${hub.id}/categories?per_page=3`);
      expect(Object.keys(paged.body).sort()).toEqual(['categories', 'summary']);
      expect(names(paged.body.categories).join('')).toBe('CED');
      expect(paged.body.summary).toEqual({ page: 1, per_page: 3, count: 4 });
      const csv = await org.api.get(`${P}/hubs/${hub.id}/categories`, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect(String(csv.headers['content-type'])).toContain('text/csv');

      // The service the public pages use: position order, players in order.
      const p = await createPlayer(org.api);
      await org.api.patch(`${P}/hubs/${hub.id}/categories/${b.id}`, { player_ids: [p.id] });
      const withPlayers = await t.services.hubs.categoriesWithPlayers(hub.id);
      expect(withPlayers.map((c) => c.name).join('')).toBe('CEDB');
      expect(withPlayers[3].player_ids).toEqual([p.id]);
    });

    it('refuses player_ids of another organization or unknown (422 naming player_ids) and changes nothing', async () => {
      const hub = await createHub();
      const mine = await createPlayer(org.api);
      const theirs = await createPlayer(other.api);
      for (const ids of [[theirs.id], [mine.id, 2147483647]]) {
        const res = await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'bad', player_ids: ids });
        expect(res.status).toBe(422);
        expect(res.body.details[0].field).toBe('player_ids');
      }
      const bad = await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'bad', player_ids: [0] });
      expect(bad.status).toBe(422);
      expect(bad.body.details[0].field).toBe('player_ids.0');
      expect((await org.api.get(`${P}/hubs/${hub.id}/categories`)).body).toEqual([]);

      const cat = (await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'good', player_ids: [mine.id] })).body;
      const res = await org.api.patch(`${P}/hubs/${hub.id}/categories/${cat.id}`, { player_ids: [theirs.id], name: 'changed' });
      expect(res.status).toBe(422);
      expect(res.body.details[0].field).toBe('player_ids');
      const list = (await org.api.get(`${P}/hubs/${hub.id}/categories`)).body;
      expect(list[0]).toMatchObject({ name: 'good', player_ids: [mine.id] });
    });

    it('removes a deleted player from its categories, and categories go with their hub', async () => {
      const hub = await createHub();
      const p1 = await createPlayer(org.api);
      const p2 = await createPlayer(org.api);
      const cat = (await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'c', player_ids: [p1.id, p2.id] })).body;
      expect((await org.api.delete(`${P}/players/${p1.id}`)).status).toBe(200);
      expect((await org.api.get(`${P}/hubs/${hub.id}/categories`)).body[0].player_ids).toEqual([p2.id]);
      await org.api.delete(`${P}/hubs/${hub.id}`);
      expect(await t.services.hubs.categoriesWithPlayers(hub.id)).toEqual([]);
      expect((await org.api.patch(`${P}/hubs/${hub.id}/categories/${cat.id}`, { name: 'x' })).status).toBe(404);
    });
  });

  describe('sitemap and public lookups', () => {
    it('answers the sitemap url; findPublicBySlug finds only public hubs', async () => {
      const hub = await createHub();
      const res = await org.api.get(`${P}/hubs/${hub.id}/sitemap`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ url: `http://reelbase.test/hubs/${hub.slug}/sitemap.xml` });
      expect((await org.api.get(`${P}/hubs/${hub.id}/sitemap.json`)).body.url).toBe(res.body.url);

      expect((await t.services.hubs.findPublicBySlug(hub.slug))?.id).toBe(hub.id);
      await org.api.patch(`${P}/hubs/${hub.id}`, { public: false });
      expect(await t.services.hubs.findPublicBySlug(hub.slug)).toBeUndefined();
      expect(await t.services.hubs.findPublicBySlug('no-such-hub-anywhere')).toBeUndefined();
    });
  });

  describe('organizations and roles', () => {
    it("answers another organization's hub and categories exactly like missing ones (404)", async () => {
      const hub = await createHub();
      const cat = (await org.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'mine' })).body;
      const missing = await other.api.get(`${P}/hubs/2147483647`);
      expect(missing.status).toBe(404);
      const calls = [
        other.api.get(`${P}/hubs/${hub.id}`),
        other.api.patch(`${P}/hubs/${hub.id}`, { name: 'x' }),
        other.api.delete(`${P}/hubs/${hub.id}`),
        other.api.get(`${P}/hubs/${hub.id}/sitemap`),
        other.api.get(`${P}/hubs/${hub.id}/categories`),
        other.api.post(`${P}/hubs/${hub.id}/categories`, { name: 'x' }),
        other.api.patch(`${P}/hubs/${hub.id}/categories/${cat.id}`, { name: 'x' }),
        other.api.delete(`${P}/hubs/${hub.id}/categories/${cat.id}`),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      // A category through another hub of the same organization is missing too.
      const hub2 = await createHub();
      expect((await org.api.patch(`${P}/hubs/${hub2.id}/categories/${cat.id}`, { name: 'x' })).status).toBe(404);
      expect((await org.api.get(`${P}/hubs/${hub.id}`)).body.name).toBe(hub.name);
      expect((await org.api.get(`${P}/hubs/abc`)).status).toBe(404);
    });

    it('lets viewers read (200) but not write (403), editors write, and no token is 401', async () => {
      const hub = await createHub();
      const viewer = await org.as('viewer');
      const editor = await org.as('editor');
      expect((await viewer.get(`${P}/hubs`)).status).toBe(200);
      expect((await viewer.get(`${P}/hubs/${hub.id}`)).status).toBe(200);
      expect((await viewer.get(`${P}/hubs/${hub.id}/categories`)).status).toBe(200);
      expect((await viewer.get(`${P}/hubs/${hub.id}/sitemap`)).status).toBe(200);
      expect((await viewer.post(`${P}/hubs`, { name: 'v' })).status).toBe(403);
      expect((await viewer.patch(`${P}/hubs/${hub.id}`, { name: 'v' })).status).toBe(403);
      expect((await viewer.delete(`${P}/hubs/${hub.id}`)).status).toBe(403);
      expect((await viewer.post(`${P}/hubs/${hub.id}/categories`, { name: 'v' })).status).toBe(403);
      const made = await editor.post(`${P}/hubs`, { name: 'by editor' });
      expect(made.status).toBe(201);
      expect((await editor.post(`${P}/hubs/${made.body.id}/categories`, { name: 'e' })).status).toBe(201);
      expect((await editor.delete(`${P}/hubs/${made.body.id}`)).status).toBe(200);
      const anonymous = client(t.app);
      expect((await anonymous.get(`${P}/hubs`)).status).toBe(401);
      expect((await anonymous.post(`${P}/hubs`, { name: 'a' })).status).toBe(401);
    });
  });
});
