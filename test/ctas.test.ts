import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { readCacheOf } from '../src/db/read-cache.ts';

const CTA_KEYS = ['auto_close', 'chapter_id', 'created_at', 'duration', 'html', 'id', 'second', 'updated_at', 'width'];
const GATE_KEYS = CTA_KEYS.filter((k) => k !== 'width');

function expectCtaShape(cta: Record<string, unknown>) {
  expect(Object.keys(cta).sort()).toEqual(CTA_KEYS);
  expect(typeof cta.id).toBe('number');
  expect(Number.isInteger(cta.id)).toBe(true);
  expect(cta.chapter_id === null || Number.isInteger(cta.chapter_id)).toBe(true);
  expect(Number.isInteger(cta.second)).toBe(true);
  expect(cta.duration === null || Number.isInteger(cta.duration)).toBe(true);
  expect(typeof cta.auto_close).toBe('boolean');
  expect(cta.width === null || Number.isInteger(cta.width)).toBe(true);
  expect(typeof cta.html).toBe('string');
  expect(Number.isInteger(cta.created_at)).toBe(true);
  expect(Number.isInteger(cta.updated_at)).toBe(true);
}

/** A 422 naming exactly these fields. */
function expect422(res: { status: number; body: any }, ...fields: string[]) {
  expect(res.status).toBe(422);
  expect(res.body.code).toBe('validation_failed');
  expect(typeof res.body.error).toBe('string');
  expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual([...fields].sort());
  for (const d of res.body.details) expect(typeof d.message).toBe('string');
}

function expect404(res: { status: number; body: any }) {
  expect(res.status).toBe(404);
  expect(res.body.code).toBe('not_found');
  expect(typeof res.body.error).toBe('string');
}

describe.each(dialects)('CTAs on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let viewer: Client;
  let anon: Client;
  let player: any;
  let chapterId: number;
  let chapter2Id: number;
  let otherChapterId: number;
  let otherCtaId: number;

  const valid = () => ({ chapter_id: chapterId, second: 10, duration: 5, auto_close: true, width: 300, html: '<a href="https://example.com">Buy</a>' });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    viewer = await org.as('viewer');
    anon = client(t.app);
    player = await createPlayer(org.api, {}, 2);
    chapterId = player.chapters_attributes[0].id;
    chapter2Id = player.chapters_attributes[1].id;
    const otherPlayer = await createPlayer(other.api);
    otherChapterId = otherPlayer.chapters_attributes[0].id;
    const otherCta = await other.api.post('/dashboard/v1/ctas', { chapter_id: otherChapterId, second: 1, duration: 2, width: 200, html: 'theirs' });
    expect(otherCta.status).toBe(201);
    otherCtaId = otherCta.body.id;
  });
  afterAll(() => t.close());

  describe('POST /v1/ctas', () => {
    it('creates a CTA on a chapter and answers 201 with the CTA object', async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await org.api.post('/dashboard/v1/ctas', valid());
      expect(res.status).toBe(201);
      expect(String(res.headers['content-type'])).toContain('application/json');
      expectCtaShape(res.body);
      expect(res.body).toMatchObject({
        chapter_id: chapterId,
        second: 10,
        duration: 5,
        auto_close: true,
        width: 300,
        html: '<a href="https://example.com">Buy</a>',
      });
      expect(res.body.created_at).toBeGreaterThanOrEqual(before);
      expect(res.body.created_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      expect(res.body.updated_at).toBe(res.body.created_at);
      const got = await org.api.get(`/dashboard/v1/ctas/${res.body.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
    });

    it('accepts the wrapped {"cta": {...}} body and the token in the body', async () => {
      const res = await anon.post('/dashboard/v1/ctas.json', { auth_token: org.token, cta: { ...valid(), second: 3, html: 'wrapped' } });
      expect(res.status).toBe(201);
      expectCtaShape(res.body);
      expect(res.body).toMatchObject({ chapter_id: chapterId, second: 3, html: 'wrapped' });
    });

    it('creates an organization default CTA when chapter_id is absent or null', async () => {
      const { chapter_id: _omit, ...noChapter } = valid();
      const res = await org.api.post('/dashboard/v1/ctas', noChapter);
      expect(res.status).toBe(201);
      expectCtaShape(res.body);
      expect(res.body.chapter_id).toBeNull();
      const explicit = await org.api.post('/dashboard/v1/ctas', { ...valid(), chapter_id: null });
      expect(explicit.status).toBe(201);
      expect(explicit.body.chapter_id).toBeNull();
    });

    it('checks width 100..500 inclusive', async () => {
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), width: 99 }), 'width');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), width: 501 }), 'width');
      for (const width of [100, 500]) {
        const ok = await org.api.post('/dashboard/v1/ctas', { ...valid(), width });
        expect(ok.status).toBe(201);
        expect(ok.body.width).toBe(width);
      }
    });

    it('checks second ≥ -1 (-1 is a postroll)', async () => {
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), second: -2 }), 'second');
      const post = await org.api.post('/dashboard/v1/ctas', { ...valid(), second: -1 });
      expect(post.status).toBe(201);
      expect(post.body.second).toBe(-1);
      const zero = await org.api.post('/dashboard/v1/ctas', { ...valid(), second: 0 });
      expect(zero.status).toBe(201);
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), second: 2 ** 31 }), 'second');
    });

    it('requires duration when auto_close is true or omitted (default true)', async () => {
      const { duration: _d, ...noDuration } = valid();
      expect422(await org.api.post('/dashboard/v1/ctas', noDuration), 'duration');
      const { auto_close: _a, ...noAutoClose } = noDuration;
      expect422(await org.api.post('/dashboard/v1/ctas', noAutoClose), 'duration');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...noDuration, duration: null }), 'duration');

      const defaulted = await org.api.post('/dashboard/v1/ctas', { ...valid(), auto_close: undefined });
      expect(defaulted.status).toBe(201);
      expect(defaulted.body.auto_close).toBe(true);

      const open = await org.api.post('/dashboard/v1/ctas', { ...noDuration, auto_close: false });
      expect(open.status).toBe(201);
      expect(open.body).toMatchObject({ auto_close: false, duration: null });

      const unused = await org.api.post('/dashboard/v1/ctas', { ...valid(), auto_close: false, duration: 7 });
      expect(unused.status).toBe(201);
      expect(unused.body).toMatchObject({ auto_close: false, duration: 7 });
    });

    it('checks duration ≥ 0', async () => {
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), duration: -1 }), 'duration');
      const zero = await org.api.post('/dashboard/v1/ctas', { ...valid(), duration: 0 });
      expect(zero.status).toBe(201);
      expect(zero.body.duration).toBe(0);
    });

    it('names every missing required attribute', async () => {
      expect422(await org.api.post('/dashboard/v1/ctas', {}), 'second', 'width', 'html');
      expect422(await org.api.post('/dashboard/v1/ctas', { cta: { chapter_id: chapterId } }), 'second', 'width', 'html');
    });

    it('checks types as sent (no coercion of JSON bodies)', async () => {
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), width: '300' }), 'width');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), second: 1.5 }), 'second');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), html: 5 }), 'html');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), auto_close: 'yes' }), 'auto_close');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), chapter_id: 'x' }), 'chapter_id');
      expect422(await org.api.post('/dashboard/v1/ctas', { ...valid(), html: 'nul\u0000byte' }), 'html');
    });

    it('answers 404 for a chapter of another organization or none at all', async () => {
      expect404(await org.api.post('/dashboard/v1/ctas', { ...valid(), chapter_id: otherChapterId }));
      expect404(await org.api.post('/dashboard/v1/ctas', { ...valid(), chapter_id: 987654 }));
      expect404(await org.api.post('/dashboard/v1/ctas', { ...valid(), chapter_id: 99999999999 }));
      expect404(await org.api.post('/dashboard/v1/ctas', { ...valid(), chapter_id: -3 }));
    });

    it('needs a token (401) and write permission (403 for a viewer)', async () => {
      const noToken = await anon.post('/dashboard/v1/ctas', valid());
      expect(noToken.status).toBe(401);
      expect(noToken.body.code).toBe('unauthorized');
      const asViewer = await viewer.post('/dashboard/v1/ctas', valid());
      expect(asViewer.status).toBe(403);
      expect(asViewer.body.code).toBe('forbidden');
    });

    it('answers 400 for malformed JSON', async () => {
      const res = await org.api.post('/dashboard/v1/ctas', '{"second": ');
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_json');
    });
  });

  describe('POST /v1/ctas/default_email_gate', () => {
    it('creates the email gate: 201 with the CTA object without width', async () => {
      const res = await org.api.post('/dashboard/v1/ctas/default_email_gate', { chapter_id: chapter2Id, is_closeable: true, is_new_contact: false });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(GATE_KEYS);
      expect(res.body).toMatchObject({ chapter_id: chapter2Id, second: 0, duration: null, auto_close: false });
      expect(Number.isInteger(res.body.id)).toBe(true);
      expect(Number.isInteger(res.body.created_at)).toBe(true);
      expect(Number.isInteger(res.body.updated_at)).toBe(true);
      expect(res.body.html).toContain('<form');
      expect(res.body.html).toContain('type="email"');
      expect(res.body.html).toContain('data-reelbase-close');

      const event = await org.api.get(`/dashboard/v1/events/${res.body.id}`);
      expect(event.status).toBe(200);
      expect(event.body).toMatchObject({ event_type: 'simple_email', closeable: true, state: 'public', chapter_id: chapter2Id, width: null });
    });

    it('records is_closeable (no skip button when false) and accepts the wrapped form', async () => {
      const res = await org.api.post('/dashboard/v1/ctas/default_email_gate', { cta: { chapter_id: chapter2Id, is_closeable: false, is_new_contact: true } });
      expect(res.status).toBe(201);
      expect(res.body.html).not.toContain('data-reelbase-close');
      expect(res.body.html).toContain('data-new-contacts-only="true"');
      const event = await org.api.get(`/dashboard/v1/events/${res.body.id}`);
      expect(event.body.closeable).toBe(false);
    });

    it('requires chapter_id, is_closeable and is_new_contact', async () => {
      expect422(await org.api.post('/dashboard/v1/ctas/default_email_gate', {}), 'chapter_id', 'is_closeable', 'is_new_contact');
      expect422(
        await org.api.post('/dashboard/v1/ctas/default_email_gate', { chapter_id: chapterId, is_closeable: 'true', is_new_contact: false }),
        'is_closeable',
      );
      expect422(await org.api.post('/dashboard/v1/ctas/default_email_gate', { chapter_id: null, is_closeable: true, is_new_contact: false }), 'chapter_id');
    });

    it('answers 404 for another organization’s chapter and 403 for a viewer', async () => {
      expect404(await org.api.post('/dashboard/v1/ctas/default_email_gate', { chapter_id: otherChapterId, is_closeable: true, is_new_contact: true }));
      expect((await viewer.post('/dashboard/v1/ctas/default_email_gate', { chapter_id: chapterId, is_closeable: true, is_new_contact: true })).status).toBe(
        403,
      );
    });
  });

  describe('GET, PATCH, DELETE /v1/ctas/:id', () => {
    let ctaId: number;
    beforeAll(async () => {
      const res = await org.api.post('/dashboard/v1/ctas', { ...valid(), auto_close: false, duration: undefined, width: 250 });
      expect(res.status).toBe(201);
      ctaId = res.body.id;
    });

    it('reads a CTA (viewers may read; .json suffix works)', async () => {
      const res = await viewer.get(`/dashboard/v1/ctas/${ctaId}.json`);
      expect(res.status).toBe(200);
      expectCtaShape(res.body);
      expect(res.body).toMatchObject({ id: ctaId, chapter_id: chapterId, second: 10, duration: null, auto_close: false, width: 250 });
    });

    it('answers 404 for a missing id, a non-numeric id and another organization’s CTA', async () => {
      expect404(await org.api.get('/dashboard/v1/ctas/999999'));
      expect404(await org.api.get('/dashboard/v1/ctas/abc'));
      expect404(await org.api.get('/dashboard/v1/ctas/0'));
      expect404(await org.api.get('/dashboard/v1/ctas/99999999999'));
      expect404(await org.api.get(`/dashboard/v1/ctas/${otherCtaId}`));
      expect404(await org.api.patch(`/dashboard/v1/ctas/${otherCtaId}`, { width: 200 }));
      expect404(await org.api.delete(`/dashboard/v1/ctas/${otherCtaId}`));
      expect((await other.api.get(`/dashboard/v1/ctas/${otherCtaId}`)).status).toBe(200);
      expect((await anon.get(`/dashboard/v1/ctas/${ctaId}`)).status).toBe(401);
    });

    it('updates the given attributes and keeps the rest', async () => {
      const res = await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 400, html: 'new', second: -1 });
      expect(res.status).toBe(200);
      expectCtaShape(res.body);
      expect(res.body).toMatchObject({ id: ctaId, chapter_id: chapterId, second: -1, duration: null, auto_close: false, width: 400, html: 'new' });
      expect(res.body.updated_at).toBeGreaterThanOrEqual(res.body.created_at);
      expect((await org.api.get(`/dashboard/v1/ctas/${ctaId}`)).body).toEqual(res.body);
    });

    it('applies the creation rules to the given attributes, on both sides of each bound', async () => {
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 99 }), 'width');
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 501 }), 'width');
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { second: -2 }), 'second');
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { duration: -1 }), 'duration');
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { html: 1 }), 'html');
      expect((await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 100 })).body.width).toBe(100);
      expect((await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 500 })).body.width).toBe(500);
      expect((await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { second: -1 })).status).toBe(200);
    });

    it('checks the duration rule on the merged record', async () => {
      // The record has no duration: turning auto_close on alone is refused…
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { auto_close: true }), 'duration');
      // …with a duration in the same request it is accepted…
      const both = await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { auto_close: true, duration: 8 });
      expect(both.status).toBe(200);
      expect(both.body).toMatchObject({ auto_close: true, duration: 8 });
      // …and the duration of an auto-closing CTA cannot be removed.
      expect422(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { duration: null }), 'duration');
      const off = await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { auto_close: false, duration: null });
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({ auto_close: false, duration: null });
    });

    it('changes content alone in one write (the CTA is not read first), never moves updated_at back, and answers 404 for a foreign or missing CTA', async () => {
      const cache = readCacheOf(t.database.db)!;
      const reads = () => {
        const { hits, misses } = cache.stats('event');
        return hits + misses;
      };
      const before = reads();
      const res = await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { html: 'one write' });
      expect(res.status).toBe(200);
      expect(res.body.html).toBe('one write');
      expect((await org.api.patch(`/dashboard/v1/events/${ctaId}`, { name: 'Named in one write' })).status).toBe(200);
      expect(reads()).toBe(before);
      // A body naming one side of the timing rule reads the CTA, to check it against the other.
      expect((await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { duration: 6 })).status).toBe(200);
      expect(reads()).toBe(before + 1);
      // Kept as it is when later than now (a clock set back).
      const later = res.body.updated_at + 3600;
      await t.database.db.updateTable('events').set({ updated_at: later }).where('id', '=', ctaId).execute();
      expect((await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 250 })).body).toMatchObject({ width: 250, updated_at: later });
      expect404(await org.api.patch(`/dashboard/v1/ctas/${otherCtaId}`, { html: 'not mine' }));
      expect((await other.api.get(`/dashboard/v1/ctas/${otherCtaId}`)).body.html).toBe('theirs');
      expect404(await org.api.patch('/dashboard/v1/ctas/999999999', { html: 'none' }));
      expect404(await org.api.patch('/dashboard/v1/events/999999999', { name: 'none' }));
    });

    it('accepts the wrapped form and ignores attributes a CTA update does not take', async () => {
      const res = await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { cta: { html: 'wrapped', chapter_id: chapter2Id, event_type: 'annotation' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ html: 'wrapped', chapter_id: chapterId });
      expect((await org.api.get(`/dashboard/v1/events/${ctaId}`)).body.event_type).toBe('simple_overlay');
    });

    it('refuses writes by a viewer', async () => {
      expect((await viewer.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 300 })).status).toBe(403);
      expect((await viewer.delete(`/dashboard/v1/ctas/${ctaId}`)).status).toBe(403);
    });

    it('deletes and answers the deleted CTA', async () => {
      const current = (await org.api.get(`/dashboard/v1/ctas/${ctaId}`)).body;
      const res = await org.api.delete(`/dashboard/v1/ctas/${ctaId}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(current);
      expect404(await org.api.get(`/dashboard/v1/ctas/${ctaId}`));
      expect404(await org.api.delete(`/dashboard/v1/ctas/${ctaId}`));
      expect404(await org.api.patch(`/dashboard/v1/ctas/${ctaId}`, { width: 200 }));
    });
  });

  describe('CTA lists and meta data', () => {
    let listPlayer: any;
    let chA: number;
    let chB: number;
    let playerCtaIds: number[];
    let defaultIds: number[];
    let listOrg: OrgContext;

    beforeAll(async () => {
      // An organization of its own so that its default CTAs are known exactly.
      listOrg = await createOrg(t);
      listPlayer = await createPlayer(listOrg.api, {}, 2);
      chA = listPlayer.chapters_attributes[0].id;
      chB = listPlayer.chapters_attributes[1].id;
      await createPlayer(listOrg.api); // a second player whose CTAs must not show up
      const make = async (chapter_id: number | undefined, second: number) => {
        const res = await listOrg.api.post('/dashboard/v1/ctas', { chapter_id, second, duration: 4, width: 320, html: `cta at ${second}` });
        expect(res.status).toBe(201);
        return res.body.id as number;
      };
      playerCtaIds = [];
      defaultIds = [];
      playerCtaIds.push(await make(chA, 1));
      defaultIds.push(await make(undefined, 2));
      playerCtaIds.push(await make(chB, 3));
      playerCtaIds.push(await make(chA, 4));
      playerCtaIds.push(await make(chB, -1));
      defaultIds.push(await make(undefined, 5));
    });

    it('lists a player’s CTAs in id order with the summary', async () => {
      const res = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['ctas', 'summary']);
      expect(res.body.ctas.map((c: any) => c.id)).toEqual(playerCtaIds);
      for (const c of res.body.ctas) expectCtaShape(c);
      expect(res.body.ctas[0]).toMatchObject({ chapter_id: chA, second: 1, duration: 4, auto_close: true, width: 320, html: 'cta at 1' });
      expect(res.body.summary).toEqual({ page: 1, per_page: 4, count: 4 });
    });

    it('adds the organization default CTAs with include_defaults', async () => {
      const res = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas?include_defaults=true`);
      expect(res.status).toBe(200);
      const all = [...playerCtaIds, ...defaultIds].sort((a, b) => a - b);
      expect(res.body.ctas.map((c: any) => c.id)).toEqual(all);
      expect(res.body.ctas.filter((c: any) => c.chapter_id === null).map((c: any) => c.id)).toEqual(defaultIds);
      expect(res.body.summary.count).toBe(6);
      const without = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas?include_defaults=false`);
      expect(without.body.ctas.map((c: any) => c.id)).toEqual(playerCtaIds);
      expect422(await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas?include_defaults=maybe`), 'include_defaults');
    });

    it('pages with count as the total across pages', async () => {
      const all = [...playerCtaIds, ...defaultIds].sort((a, b) => a - b);
      const seen: number[] = [];
      for (const page of [1, 2, 3]) {
        const res = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas?include_defaults=true&per_page=4&page=${page}`);
        expect(res.status).toBe(200);
        expect(res.body.summary).toEqual({ page, per_page: 4, count: 6 });
        seen.push(...res.body.ctas.map((c: any) => c.id));
        expect(res.body.ctas.length).toBe(page === 1 ? 4 : page === 2 ? 2 : 0);
      }
      expect(seen).toEqual(all);
      const first = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas?per_page=2`);
      expect(first.body.summary).toEqual({ page: 1, per_page: 2, count: 4 });
      expect(first.body.ctas.map((c: any) => c.id)).toEqual(playerCtaIds.slice(0, 2));
    });

    it('checks per_page 1..200 and page ≥ 1', async () => {
      const base = `/dashboard/v1/players/${listPlayer.id}/ctas`;
      expect422(await listOrg.api.get(`${base}?per_page=201`), 'per_page');
      expect422(await listOrg.api.get(`${base}?per_page=0`), 'per_page');
      expect422(await listOrg.api.get(`${base}?per_page=2&page=0`), 'page');
      expect422(await listOrg.api.get(`${base}?per_page=abc`), 'per_page');
      expect((await listOrg.api.get(`${base}?per_page=200`)).status).toBe(200);
      expect((await listOrg.api.get(`${base}?per_page=1`)).body.ctas.length).toBe(1);
    });

    it('answers the same list by player uuid, and both path forms coexist', async () => {
      const byId = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas?include_defaults=true&per_page=3&page=2`);
      const byUuid = await listOrg.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}/ctas?include_defaults=true&per_page=3&page=2`);
      expect(byUuid.status).toBe(200);
      expect(byUuid.body).toEqual(byId.body);
      const plain = await listOrg.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}/ctas.json`);
      expect(plain.body.ctas.map((c: any) => c.id)).toEqual(playerCtaIds);
      // The player routes themselves still resolve.
      expect((await listOrg.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}`)).body.id).toBe(listPlayer.id);
      expect((await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}`)).body.uuid).toBe(listPlayer.uuid);
    });

    it('answers 404 for unknown, malformed or foreign players', async () => {
      expect404(await listOrg.api.get('/dashboard/v1/players/999999/ctas'));
      expect404(await listOrg.api.get('/dashboard/v1/players/abc/ctas'));
      expect404(await listOrg.api.get('/dashboard/v1/players/uuid=00000000-0000-0000-0000-000000000000/ctas'));
      expect404(await listOrg.api.get('/dashboard/v1/players/uuid=/ctas'));
      expect404(await listOrg.api.get('/dashboard/v1/players/uuid=a%00b/ctas'));
      expect404(await org.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas`));
      expect404(await org.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}/ctas`));
      expect404(await org.api.get(`/dashboard/v1/players/${listPlayer.id}/cta_meta`));
      expect404(await org.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}/cta_meta`));
      expect((await anon.get(`/dashboard/v1/players/${listPlayer.id}/ctas`)).status).toBe(401);
    });

    it('lists a chapter’s CTAs with paging', async () => {
      const res = await listOrg.api.get(`/dashboard/v1/chapters/${chB}/ctas`);
      expect(res.status).toBe(200);
      expect(res.body.ctas.map((c: any) => c.id)).toEqual([playerCtaIds[1], playerCtaIds[3]]);
      expect(res.body.summary).toEqual({ page: 1, per_page: 2, count: 2 });
      const paged = await listOrg.api.get(`/dashboard/v1/chapters/${chB}/ctas?per_page=1&page=2`);
      expect(paged.body.ctas.map((c: any) => c.id)).toEqual([playerCtaIds[3]]);
      expect(paged.body.summary).toEqual({ page: 2, per_page: 1, count: 2 });
      expect404(await org.api.get(`/dashboard/v1/chapters/${chB}/ctas`));
      expect404(await listOrg.api.get('/dashboard/v1/chapters/999999/ctas'));
      expect404(await listOrg.api.get('/dashboard/v1/chapters/x/ctas'));
    });

    it('answers an empty list with the envelope', async () => {
      const empty = await createPlayer(listOrg.api);
      const res = await listOrg.api.get(`/dashboard/v1/players/${empty.id}/ctas`);
      expect(res.body).toEqual({ ctas: [], summary: { page: 1, per_page: 0, count: 0 } });
      const ch = await listOrg.api.get(`/dashboard/v1/chapters/${empty.chapters_attributes[0].id}/ctas?per_page=10`);
      expect(ch.body).toEqual({ ctas: [], summary: { page: 1, per_page: 10, count: 0 } });
    });

    it('answers a CTA list as CSV (header + one row per CTA) and XLSX', async () => {
      const res = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/ctas`, { accept: 'text/csv' });
      expect(res.status).toBe(200);
      expect(String(res.headers['content-type'])).toContain('text/csv');
      const lines = res.raw.trim().split('\n');
      expect(lines[0]).toBe('id,chapter_id,second,duration,auto_close,width,html,created_at,updated_at');
      expect(lines.length).toBe(1 + playerCtaIds.length);
      expect(lines[1].startsWith(`${playerCtaIds[0]},${chA},1,4,true,320,cta at 1,`)).toBe(true);
      const xlsx = await t.app.inject({
        method: 'GET',
        url: `/dashboard/v1/chapters/${chA}/ctas`,
        headers: { authorization: `Bearer ${listOrg.token}`, accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
      });
      expect(xlsx.statusCode).toBe(200);
      expect(xlsx.rawPayload.subarray(0, 2).toString()).toBe('PK');
      // A single CTA is no list.
      expect((await listOrg.api.get(`/dashboard/v1/ctas/${playerCtaIds[0]}`, { accept: 'text/csv' })).status).toBe(406);
    });

    it('counts public and draft CTAs in cta_meta, by id and by uuid', async () => {
      const expected = { max_cta_width: 500, num_public_ctas: 4, num_draft_ctas: 0 };
      const byId = await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/cta_meta`);
      expect(byId.status).toBe(200);
      expect(byId.body).toEqual(expected);
      const draft = await listOrg.api.patch(`/dashboard/v1/events/${playerCtaIds[2]}`, { state: 'draft' });
      expect(draft.status).toBe(200);
      const after = { max_cta_width: 500, num_public_ctas: 3, num_draft_ctas: 1 };
      expect((await listOrg.api.get(`/dashboard/v1/players/${listPlayer.id}/cta_meta`)).body).toEqual(after);
      expect((await listOrg.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}/cta_meta.json`)).body).toEqual(after);
      expect((await listOrg.api.get(`/dashboard/v1/players/uuid=${listPlayer.uuid}/cta_meta`)).body).toEqual(after);
      await listOrg.api.patch(`/dashboard/v1/events/${playerCtaIds[2]}`, { state: 'public' });
      const fresh = await createPlayer(listOrg.api);
      expect((await listOrg.api.get(`/dashboard/v1/players/${fresh.id}/cta_meta`)).body).toEqual({ max_cta_width: 500, num_public_ctas: 0, num_draft_ctas: 0 });
    });

    it('documents the CTA operations in OpenAPI under the ctas tag', async () => {
      const doc = await anon.get('/dashboard/openapi.json');
      expect(doc.status).toBe(200);
      const paths = Object.keys(doc.body.paths);
      expect(paths).toContain('/dashboard/v1/ctas');
      expect(paths).toContain('/dashboard/v1/ctas/{id}');
      expect(paths).toContain('/dashboard/v1/players/{id}/cta_meta');
      expect(doc.body.paths['/dashboard/v1/ctas'].post.tags).toEqual(['ctas']);
    });
  });
});
