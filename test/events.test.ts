import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const EVENT_KEYS = [
  'annotation_css',
  'auto_close',
  'background_color',
  'blur',
  'chapter_id',
  'closeable',
  'created_at',
  'description',
  'duration',
  'event_type',
  'fullscreen',
  'html',
  'id',
  'name',
  'second',
  'state',
  'updated_at',
  'width',
];

const EVENT_TYPES = [
  'simple_post_roll',
  'simple_overlay',
  'simple_email',
  'fullscreen',
  'annotation',
  'marketo_form',
  'sharing_page_action',
  'vy_free_post_roll',
  'vy_free_on_pause',
];

function expectEventShape(e: Record<string, unknown>) {
  expect(Object.keys(e).sort()).toEqual(EVENT_KEYS);
  expect(Number.isInteger(e.id)).toBe(true);
  for (const k of ['name', 'description', 'background_color', 'annotation_css']) expect(e[k] === null || typeof e[k] === 'string').toBe(true);
  for (const k of ['event_type', 'html', 'state']) expect(typeof e[k]).toBe('string');
  for (const k of ['closeable', 'fullscreen', 'blur', 'auto_close']) expect(typeof e[k]).toBe('boolean');
  for (const k of ['chapter_id', 'duration', 'width']) expect(e[k] === null || Number.isInteger(e[k])).toBe(true);
  for (const k of ['second', 'created_at', 'updated_at']) expect(Number.isInteger(e[k])).toBe(true);
}

function expect422(res: { status: number; body: any }, ...fields: string[]) {
  expect(res.status).toBe(422);
  expect(res.body.code).toBe('validation_failed');
  expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual([...fields].sort());
}

function expect404(res: { status: number; body: any }) {
  expect(res.status).toBe(404);
  expect(res.body.code).toBe('not_found');
}

describe.each(dialects)('events on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let viewer: Client;
  let anon: Client;
  let player: any;
  let chapterId: number;
  let chapter2Id: number;
  let otherChapterId: number;
  let otherEventId: number;

  const full = () => ({
    name: 'Subscribe overlay',
    description: 'Asks viewers to subscribe',
    event_type: 'simple_overlay',
    html: '<button>Subscribe</button>',
    closeable: false,
    fullscreen: true,
    background_color: '#112233',
    annotation_css: '.x { color: red }',
    blur: true,
    state: 'draft',
    chapter_id: chapterId,
    second: 12,
    duration: 6,
    auto_close: true,
    width: 350,
  });

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
    const otherEvent = await other.api.post('/dashboard/v1/events', { event_type: 'annotation', chapter_id: otherChapterId, name: 'theirs' });
    expect(otherEvent.status).toBe(201);
    otherEventId = otherEvent.body.id;
  });
  afterAll(() => t.close());

  describe('POST /v1/events', () => {
    it('creates an event with every attribute', async () => {
      const res = await org.api.post('/dashboard/v1/events', full());
      expect(res.status).toBe(201);
      expectEventShape(res.body);
      const { id, created_at, updated_at, ...rest } = res.body;
      expect(rest).toEqual(full());
      expect(created_at).toBe(updated_at);
      expect((await org.api.get(`/dashboard/v1/events/${id}`)).body).toEqual(res.body);
    });

    it('fills defaults; without a chapter it is an organization default event', async () => {
      const res = await org.api.post('/dashboard/v1/events', { event: { event_type: 'annotation' } });
      expect(res.status).toBe(201);
      expectEventShape(res.body);
      expect(res.body).toMatchObject({
        name: null,
        description: null,
        event_type: 'annotation',
        html: '',
        closeable: true,
        fullscreen: false,
        background_color: null,
        annotation_css: null,
        blur: false,
        state: 'public',
        chapter_id: null,
        second: 0,
        duration: null,
        auto_close: false,
        width: null,
      });
    });

    it('accepts every event type of the reference and refuses others, naming event_type', async () => {
      for (const event_type of EVENT_TYPES) {
        const res = await org.api.post('/dashboard/v1/events', { event_type, chapter_id: chapterId });
        expect(res.status).toBe(201);
        expect(res.body.event_type).toBe(event_type);
      }
      expect422(await org.api.post('/dashboard/v1/events', { event_type: 'popup' }), 'event_type');
      expect422(await org.api.post('/dashboard/v1/events', { name: 'no type' }), 'event_type');
      expect422(await org.api.post('/dashboard/v1/events', { event_type: 3 }), 'event_type');
    });

    it('checks state, width, second, duration and the auto_close rule', async () => {
      const base = { event_type: 'simple_overlay', chapter_id: chapterId };
      expect422(await org.api.post('/dashboard/v1/events', { ...base, state: 'archived' }), 'state');
      expect422(await org.api.post('/dashboard/v1/events', { ...base, width: 99 }), 'width');
      expect422(await org.api.post('/dashboard/v1/events', { ...base, width: 501 }), 'width');
      expect((await org.api.post('/dashboard/v1/events', { ...base, width: 100 })).status).toBe(201);
      expect((await org.api.post('/dashboard/v1/events', { ...base, width: 500 })).status).toBe(201);
      expect422(await org.api.post('/dashboard/v1/events', { ...base, second: -2 }), 'second');
      expect((await org.api.post('/dashboard/v1/events', { ...base, second: -1 })).status).toBe(201);
      expect422(await org.api.post('/dashboard/v1/events', { ...base, duration: -1 }), 'duration');
      expect422(await org.api.post('/dashboard/v1/events', { ...base, auto_close: true }), 'duration');
      expect((await org.api.post('/dashboard/v1/events', { ...base, auto_close: true, duration: 0 })).status).toBe(201);
      expect422(await org.api.post('/dashboard/v1/events', { ...base, closeable: 'no' }), 'closeable');
      expect422(await org.api.post('/dashboard/v1/events', { ...base, name: 'a\u0000b' }), 'name');
    });

    it('answers 404 for another organization’s chapter; 401 without token; 403 for a viewer', async () => {
      expect404(await org.api.post('/dashboard/v1/events', { event_type: 'annotation', chapter_id: otherChapterId }));
      expect404(await org.api.post('/dashboard/v1/events', { event_type: 'annotation', chapter_id: 999999 }));
      expect((await anon.post('/dashboard/v1/events', { event_type: 'annotation' })).status).toBe(401);
      const res = await viewer.post('/dashboard/v1/events', { event_type: 'annotation' });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    });
  });

  describe('GET, PATCH, DELETE /v1/events/:id', () => {
    let eventId: number;
    beforeAll(async () => {
      eventId = (await org.api.post('/dashboard/v1/events', full())).body.id;
    });

    it('reads an event (viewer allowed) and hides other organizations’ events', async () => {
      const res = await viewer.get(`/dashboard/v1/events/${eventId}`);
      expect(res.status).toBe(200);
      expectEventShape(res.body);
      expect(res.body.name).toBe('Subscribe overlay');
      expect404(await org.api.get(`/dashboard/v1/events/${otherEventId}`));
      expect404(await org.api.get('/dashboard/v1/events/999999'));
      expect404(await org.api.get('/dashboard/v1/events/abc'));
      expect((await anon.get(`/dashboard/v1/events/${eventId}`)).status).toBe(401);
    });

    it('updates a subset, checking the merged record', async () => {
      const res = await org.api.patch(`/dashboard/v1/events/${eventId}`, {
        event: { name: 'Renamed', state: 'public', event_type: 'annotation', chapter_id: chapter2Id },
      });
      expect(res.status).toBe(200);
      expectEventShape(res.body);
      expect(res.body).toMatchObject({
        name: 'Renamed',
        state: 'public',
        event_type: 'annotation',
        chapter_id: chapter2Id,
        html: '<button>Subscribe</button>',
        duration: 6,
        auto_close: true,
      });
      expect422(await org.api.patch(`/dashboard/v1/events/${eventId}`, { duration: null }), 'duration');
      expect422(await org.api.patch(`/dashboard/v1/events/${eventId}`, { event_type: 'nope' }), 'event_type');
      expect422(await org.api.patch(`/dashboard/v1/events/${eventId}`, { state: 'hidden' }), 'state');
      expect422(await org.api.patch(`/dashboard/v1/events/${eventId}`, { width: 99 }), 'width');
      expect404(await org.api.patch(`/dashboard/v1/events/${eventId}`, { chapter_id: otherChapterId }));
      const cleared = await org.api.patch(`/dashboard/v1/events/${eventId}`, { auto_close: false, duration: null, width: null, name: null });
      expect(cleared.body).toMatchObject({ auto_close: false, duration: null, width: null, name: null });
      expect404(await org.api.patch(`/dashboard/v1/events/${otherEventId}`, { name: 'mine' }));
      expect((await viewer.patch(`/dashboard/v1/events/${eventId}`, { name: 'x' })).status).toBe(403);
    });

    it('is the same record as the CTA of that id', async () => {
      const asCta = await org.api.get(`/dashboard/v1/ctas/${eventId}`);
      const asEvent = await org.api.get(`/dashboard/v1/events/${eventId}`);
      expect(asCta.status).toBe(200);
      for (const k of ['id', 'chapter_id', 'second', 'duration', 'auto_close', 'width', 'html', 'created_at', 'updated_at']) {
        expect(asCta.body[k]).toEqual(asEvent.body[k]);
      }
    });

    it('deletes and answers the deleted event', async () => {
      const current = (await org.api.get(`/dashboard/v1/events/${eventId}`)).body;
      expect((await viewer.delete(`/dashboard/v1/events/${eventId}`)).status).toBe(403);
      expect404(await org.api.delete(`/dashboard/v1/events/${otherEventId}`));
      const res = await org.api.delete(`/dashboard/v1/events/${eventId}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(current);
      expect404(await org.api.get(`/dashboard/v1/events/${eventId}`));
      expect404(await org.api.delete(`/dashboard/v1/events/${eventId}`));
    });
  });

  describe('POST /v1/events/:id/duplicate', () => {
    it('copies an event as a draft at the same place', async () => {
      const source = (await org.api.post('/dashboard/v1/events', { ...full(), state: 'public' })).body;
      // No body at all is a plain copy.
      const raw = await t.app.inject({ method: 'POST', url: `/dashboard/v1/events/${source.id}/duplicate`, headers: { authorization: `Bearer ${org.token}` } });
      expect(raw.statusCode).toBe(201);
      const copy = JSON.parse(raw.body);
      expectEventShape(copy);
      expect(copy.id).not.toBe(source.id);
      const { id: _a, created_at: _b, updated_at: _c, name, state, ...content } = copy;
      const { id: _d, created_at: _e, updated_at: _f, name: srcName, state: _g, ...srcContent } = source;
      expect(content).toEqual(srcContent);
      expect(name).toBe(`${srcName} (copy)`);
      expect(state).toBe('draft');
      expect((await org.api.get(`/dashboard/v1/events/${source.id}`)).body).toEqual(source);
    });

    it('takes overrides of name, state, chapter and second', async () => {
      const source = (await org.api.post('/dashboard/v1/events', full())).body;
      const res = await org.api.post(`/dashboard/v1/events/${source.id}/duplicate`, {
        event: { name: 'Variant B', state: 'public', chapter_id: chapter2Id, second: 30 },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'Variant B', state: 'public', chapter_id: chapter2Id, second: 30, html: source.html });
      expect422(await org.api.post(`/dashboard/v1/events/${source.id}/duplicate`, { state: 'gone' }), 'state');
      expect404(await org.api.post(`/dashboard/v1/events/${source.id}/duplicate`, { chapter_id: otherChapterId }));
    });

    it('answers 404 for another organization’s event and 403 for a viewer', async () => {
      expect404(await org.api.post(`/dashboard/v1/events/${otherEventId}/duplicate`, {}));
      expect404(await org.api.post('/dashboard/v1/events/999999/duplicate', {}));
      const mine = (await org.api.post('/dashboard/v1/events', { event_type: 'annotation', chapter_id: chapterId })).body;
      expect((await viewer.post(`/dashboard/v1/events/${mine.id}/duplicate`, {})).status).toBe(403);
    });
  });

  describe('lists and search', () => {
    let listOrg: OrgContext;
    let ids: number[];
    let listChapter: number;

    beforeAll(async () => {
      listOrg = await createOrg(t);
      const p = await createPlayer(listOrg.api);
      listChapter = p.chapters_attributes[0].id;
      const bodies = [
        { event_type: 'simple_overlay', name: 'Spring SALE', chapter_id: listChapter },
        { event_type: 'annotation', name: 'Note', description: 'mentions the sale price', chapter_id: listChapter, state: 'draft' },
        { event_type: 'simple_overlay', name: 'Plain', html: '<p>Big Sale today</p>' },
        { event_type: 'fullscreen', name: 'Other', html: '<p>100% off</p>', chapter_id: listChapter },
        { event_type: 'simple_email', name: 'Gate', chapter_id: listChapter },
      ];
      ids = [];
      for (const b of bodies) {
        const res = await listOrg.api.post('/dashboard/v1/events', b);
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
    });

    it('lists every event of the organization in id order with the summary', async () => {
      const res = await listOrg.api.get('/dashboard/v1/events');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['events', 'summary']);
      expect(res.body.events.map((e: any) => e.id)).toEqual(ids);
      for (const e of res.body.events) expectEventShape(e);
      expect(res.body.summary).toEqual({ page: 1, per_page: 5, count: 5 });
      const viewerList = await (await listOrg.as('viewer')).get('/dashboard/v1/events');
      expect(viewerList.status).toBe(200);
      expect((await anon.get('/dashboard/v1/events')).status).toBe(401);
    });

    it('pages with count as the total', async () => {
      const p1 = await listOrg.api.get('/dashboard/v1/events?per_page=2&page=1');
      const p3 = await listOrg.api.get('/dashboard/v1/events?per_page=2&page=3');
      expect(p1.body.summary).toEqual({ page: 1, per_page: 2, count: 5 });
      expect(p1.body.events.map((e: any) => e.id)).toEqual(ids.slice(0, 2));
      expect(p3.body.summary).toEqual({ page: 3, per_page: 2, count: 5 });
      expect(p3.body.events.map((e: any) => e.id)).toEqual(ids.slice(4));
      expect422(await listOrg.api.get('/dashboard/v1/events?per_page=201'), 'per_page');
    });

    it('filters by event_type (array forms) and state', async () => {
      const one = await listOrg.api.get('/dashboard/v1/events?event_type=simple_overlay');
      expect(one.body.events.map((e: any) => e.id)).toEqual([ids[0], ids[2]]);
      expect(one.body.summary.count).toBe(2);
      const two = await listOrg.api.get('/dashboard/v1/events?event_type[]=annotation&event_type[]=fullscreen');
      expect(two.body.events.map((e: any) => e.id)).toEqual([ids[1], ids[3]]);
      const comma = await listOrg.api.get('/dashboard/v1/events?event_type=annotation,fullscreen');
      expect(comma.body.events.map((e: any) => e.id)).toEqual([ids[1], ids[3]]);
      const drafts = await listOrg.api.get('/dashboard/v1/events?state=draft');
      expect(drafts.body.events.map((e: any) => e.id)).toEqual([ids[1]]);
      expect((await listOrg.api.get('/dashboard/v1/events?event_type=bogus')).status).toBe(422);
      expect422(await listOrg.api.get('/dashboard/v1/events?state=bogus'), 'state');
    });

    it('searches name, description and html case-insensitively', async () => {
      const res = await listOrg.api.get('/dashboard/v1/events/search?query=sale');
      expect(res.status).toBe(200);
      expect(res.body.events.map((e: any) => e.id)).toEqual([ids[0], ids[1], ids[2]]);
      expect(res.body.summary).toEqual({ page: 1, per_page: 3, count: 3 });
      const typed = await listOrg.api.get('/dashboard/v1/events/search?query=SALE&event_type=simple_overlay');
      expect(typed.body.events.map((e: any) => e.id)).toEqual([ids[0], ids[2]]);
      const paged = await listOrg.api.get('/dashboard/v1/events/search?query=sale&per_page=1&page=2');
      expect(paged.body.events.map((e: any) => e.id)).toEqual([ids[1]]);
      expect(paged.body.summary).toEqual({ page: 2, per_page: 1, count: 3 });
      // LIKE wildcards are literal.
      const percent = await listOrg.api.get('/dashboard/v1/events/search?query=' + encodeURIComponent('100%'));
      expect(percent.body.events.map((e: any) => e.id)).toEqual([ids[3]]);
      const none = await listOrg.api.get('/dashboard/v1/events/search?query=zzz');
      expect(none.body).toEqual({ events: [], summary: { page: 1, per_page: 0, count: 0 } });
      const all = await listOrg.api.get('/dashboard/v1/events/search');
      expect(all.body.summary.count).toBe(5);
      // Another organization's events are never found.
      expect((await other.api.get('/dashboard/v1/events/search?query=sale')).body.summary.count).toBe(0);
    });

    it('one matching rule on both dialects (docs/performance.md, "Search"): a substring of a column, any case, wildcards and quotes literal, short text too', async () => {
      const org2 = await createOrg(t);
      const made: Record<string, number> = {};
      const bodies: Record<string, Record<string, unknown>> = {
        webinar: { name: 'Join the Webinar', html: '<p>x</p>' },
        quoted: { name: 'Say "hello" there', html: '<p>x</p>' },
        under: { name: 'snake_case name', html: '<p>x</p>' },
        split: { name: 'end of name', description: 'start of description', html: '<p>x</p>' },
        tag: { name: 'Tagged', html: '<div class="promo">Buy</div>' },
      };
      for (const [key, body] of Object.entries(bodies)) {
        const res = await org2.api.post('/dashboard/v1/events', { event_type: 'simple_overlay', ...body });
        expect(res.status, res.raw).toBe(201);
        made[key] = res.body.id;
      }
      const found = async (query: string) =>
        (await org2.api.get(`/dashboard/v1/events/search?query=${encodeURIComponent(query)}&per_page=50`)).body.events.map((e: any) => e.id).sort();
      expect(await found('EBINA')).toEqual([made.webinar]); // inside a word, any case
      expect(await found('"hello"')).toEqual([made.quoted]); // quotes are characters
      expect(await found('e_c')).toEqual([made.under]); // `_` is no wildcard
      expect(await found('e_')).toEqual([made.under]); // short text: read, same rule
      expect(await found('Ag')).toEqual([made.tag]);
      expect(await found('name start')).toEqual([]); // a match never spans two columns
      expect(await found('class="promo"')).toEqual([made.tag]); // html is searched as written
      // Kept up to date by every write: an edit is found by its new text only, a deleted event no more.
      expect((await org2.api.patch(`/dashboard/v1/events/${made.webinar}`, { name: 'Join the meetup' })).status).toBe(200);
      expect(await found('webinar')).toEqual([]);
      expect(await found('MEETUP')).toEqual([made.webinar]);
      expect((await org2.api.delete(`/dashboard/v1/events/${made.webinar}`)).status).toBe(200);
      expect(await found('meetup')).toEqual([]);
    });

    it('answers lists as CSV', async () => {
      const res = await listOrg.api.get('/dashboard/v1/events/search?query=sale', { accept: 'text/csv' });
      expect(res.status).toBe(200);
      expect(String(res.headers['content-type'])).toContain('text/csv');
      const lines = res.raw.trim().split('\n');
      expect(lines[0]).toBe(
        'id,name,description,event_type,html,closeable,fullscreen,background_color,annotation_css,blur,state,chapter_id,second,duration,auto_close,width,created_at,updated_at',
      );
      expect(lines.length).toBe(4);
    });
  });

  describe('owner_meta, event_meta and adding events to a player', () => {
    let metaOrg: OrgContext;
    let p: any;
    let firstChapter: number;
    let secondChapter: number;
    let onPlayer: number[];
    let defaultId: number;

    beforeAll(async () => {
      metaOrg = await createOrg(t);
      p = await createPlayer(metaOrg.api, {}, 2);
      firstChapter = p.chapters_attributes[0].id;
      secondChapter = p.chapters_attributes[1].id;
      onPlayer = [];
      defaultId = (await metaOrg.api.post('/dashboard/v1/events', { event_type: 'simple_post_roll', second: -1 })).body.id;
    });

    it('adds an event to the player’s first chapter by default', async () => {
      const res = await metaOrg.api.post(`/dashboard/v1/players/uuid=${p.uuid}/events`, {
        event_type: 'simple_overlay',
        name: 'First',
        second: 4,
        duration: 3,
        auto_close: true,
        width: 200,
      });
      expect(res.status).toBe(201);
      expectEventShape(res.body);
      expect(res.body).toMatchObject({
        chapter_id: firstChapter,
        name: 'First',
        second: 4,
        duration: 3,
        auto_close: true,
        width: 200,
        event_type: 'simple_overlay',
      });
      onPlayer.push(res.body.id);
      const second = await metaOrg.api.post(`/dashboard/v1/players/uuid=${p.uuid}/events.json`, {
        event: { event_type: 'annotation', chapter_id: secondChapter, state: 'draft' },
      });
      expect(second.status).toBe(201);
      expect(second.body.chapter_id).toBe(secondChapter);
      onPlayer.push(second.body.id);
    });

    it('refuses a chapter of another player (422), of another organization (404), unknown players (404)', async () => {
      const otherPlayer = await createPlayer(metaOrg.api);
      expect422(
        await metaOrg.api.post(`/dashboard/v1/players/uuid=${p.uuid}/events`, { event_type: 'annotation', chapter_id: otherPlayer.chapters_attributes[0].id }),
        'chapter_id',
      );
      expect404(await metaOrg.api.post(`/dashboard/v1/players/uuid=${p.uuid}/events`, { event_type: 'annotation', chapter_id: otherChapterId }));
      expect404(await metaOrg.api.post('/dashboard/v1/players/uuid=nope/events', { event_type: 'annotation' }));
      expect404(await other.api.post(`/dashboard/v1/players/uuid=${p.uuid}/events`, { event_type: 'annotation' }));
      expect422(await metaOrg.api.post(`/dashboard/v1/players/uuid=${p.uuid}/events`, { name: 'typeless' }), 'event_type');
      expect((await (await metaOrg.as('viewer')).post(`/dashboard/v1/players/uuid=${p.uuid}/events`, { event_type: 'annotation' })).status).toBe(403);
    });

    it('reports the chapter, player, video and timing of an event (owner_meta)', async () => {
      const res = await metaOrg.api.get(`/dashboard/v1/events/${onPlayer[0]}/owner_meta`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        event_id: onPlayer[0],
        is_default: false,
        chapter_id: firstChapter,
        player_id: p.id,
        player_uuid: p.uuid,
        video_id: p.chapters_attributes[0].video_id,
        position: 0,
        second: 4,
        duration: 3,
      });
      const def = await metaOrg.api.get(`/dashboard/v1/events/${defaultId}/owner_meta`);
      expect(def.body).toEqual({
        event_id: defaultId,
        is_default: true,
        chapter_id: null,
        player_id: null,
        player_uuid: null,
        video_id: null,
        position: null,
        second: -1,
        duration: null,
      });
      expect404(await metaOrg.api.get(`/dashboard/v1/events/${otherEventId}/owner_meta`));
      expect404(await metaOrg.api.get('/dashboard/v1/events/x/owner_meta'));
    });

    it('answers the player’s event metadata with counts by state and type', async () => {
      const res = await metaOrg.api.get(`/dashboard/v1/players/uuid=${p.uuid}/event_meta`);
      expect(res.status).toBe(200);
      const types = Object.fromEntries(EVENT_TYPES.map((k) => [k, 0]));
      expect(res.body).toMatchObject({
        player_id: p.id,
        player_uuid: p.uuid,
        max_cta_width: 500,
        num_events: 3,
        num_public_events: 2,
        num_draft_events: 1,
        num_default_events: 1,
        event_types: { ...types, simple_overlay: 1, annotation: 1, simple_post_roll: 1 },
      });
      expect(res.body.events.map((e: any) => e.id)).toEqual([defaultId, ...onPlayer].sort((a, b) => a - b));
      for (const e of res.body.events) expectEventShape(e);

      const own = await metaOrg.api.get(`/dashboard/v1/players/uuid=${p.uuid}/event_meta?include_defaults=false`);
      expect(own.body).toMatchObject({ num_events: 2, num_public_events: 1, num_draft_events: 1, num_default_events: 0 });
      expect(own.body.events.map((e: any) => e.id)).toEqual(onPlayer);

      expect404(await metaOrg.api.get('/dashboard/v1/players/uuid=unknown/event_meta'));
      expect404(await other.api.get(`/dashboard/v1/players/uuid=${p.uuid}/event_meta`));
      expect((await anon.get(`/dashboard/v1/players/uuid=${p.uuid}/event_meta`)).status).toBe(401);
    });
  });

  describe('organization default events', () => {
    let defOrg: OrgContext;
    let base: string;
    let chapterEvent: number;

    beforeAll(async () => {
      defOrg = await createOrg(t);
      base = `/dashboard/v1/organizations/${defOrg.organizationId}/events`;
      const pl = await createPlayer(defOrg.api);
      chapterEvent = (
        await defOrg.api.post('/dashboard/v1/events', {
          event_type: 'annotation',
          chapter_id: pl.chapters_attributes[0].id,
          name: 'On chapter',
          html: '<i>n</i>',
        })
      ).body.id;
    });

    it('starts empty and adds default events answering {event_id, second, duration, event}', async () => {
      const empty = await defOrg.api.get(base);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual([]);

      const res = await defOrg.api.post(base, {
        event_type: 'simple_overlay',
        name: 'Everywhere',
        second: 5,
        duration: 10,
        auto_close: true,
        width: 300,
        html: '<b>hi</b>',
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['duration', 'event', 'event_id', 'second']);
      expect(res.body).toMatchObject({ second: 5, duration: 10 });
      expectEventShape(res.body.event);
      expect(res.body.event).toMatchObject({ id: res.body.event_id, chapter_id: null, name: 'Everywhere', second: 5, duration: 10, html: '<b>hi</b>' });

      const list = await defOrg.api.get(base);
      expect(list.body).toEqual([res.body]);
    });

    it('copies an existing event as a default with event_id', async () => {
      const res = await defOrg.api.post(base, { event_id: chapterEvent, second: 2 });
      expect(res.status).toBe(201);
      expect(res.body.event_id).not.toBe(chapterEvent);
      expect(res.body.event).toMatchObject({ chapter_id: null, name: 'On chapter', html: '<i>n</i>', event_type: 'annotation', second: 2 });
      expect((await defOrg.api.get(`/dashboard/v1/events/${chapterEvent}`)).body.chapter_id).not.toBeNull();
      expect404(await defOrg.api.post(base, { event_id: otherEventId }));
      expect422(await defOrg.api.post(base, { name: 'no type' }), 'event_type');
      expect422(await defOrg.api.post(base, { event_type: 'x' }), 'event_type');
      expect422(await defOrg.api.post(base, { event_type: 'annotation', auto_close: true }), 'duration');
    });

    it('lists only default events, in id order, and as CSV', async () => {
      const list = await defOrg.api.get(base);
      expect(list.body.length).toBe(2);
      expect(list.body.every((i: any) => i.event.chapter_id === null)).toBe(true);
      expect(list.body.map((i: any) => i.event_id)).toEqual([...list.body.map((i: any) => i.event_id)].sort((a: number, b: number) => a - b));
      const paged = await defOrg.api.get(`${base}?per_page=1&page=2`);
      expect(paged.body).toEqual([list.body[1]]);
      const csv = await defOrg.api.get(base, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      const lines = csv.raw.trim().split('\n');
      expect(lines[0].startsWith('event_id,second,duration,event.id,event.name')).toBe(true);
      expect(lines.length).toBe(3);
    });

    it('modifies and deletes default events; chapter events are not defaults', async () => {
      const created = (await defOrg.api.post(base, { event_type: 'fullscreen', name: 'Temp' })).body;
      const patched = await defOrg.api.patch(`${base}/${created.event_id}`, { second: 9, duration: 4, name: 'Kept', chapter_id: 1 });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ event_id: created.event_id, second: 9, duration: 4 });
      expect(patched.body.event).toMatchObject({ name: 'Kept', chapter_id: null });
      expect422(await defOrg.api.patch(`${base}/${created.event_id}`, { width: 600 }), 'width');
      expect404(await defOrg.api.patch(`${base}/${chapterEvent}`, { second: 1 }));
      expect404(await defOrg.api.delete(`${base}/${chapterEvent}`));
      expect404(await defOrg.api.patch(`${base}/999999`, { second: 1 }));

      const removed = await defOrg.api.delete(`${base}/${created.event_id}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual(patched.body);
      expect(removed.body.event.name).toBe('Kept');
      expect404(await defOrg.api.get(`/dashboard/v1/events/${created.event_id}`));
      expect404(await defOrg.api.delete(`${base}/${created.event_id}`));
    });

    it('answers 404 for another organization’s path and 403 for viewer writes', async () => {
      const foreign = `/dashboard/v1/organizations/${other.organizationId}/events`;
      expect404(await defOrg.api.get(foreign));
      expect404(await defOrg.api.post(foreign, { event_type: 'annotation' }));
      expect404(await defOrg.api.patch(`${foreign}/${otherEventId}`, { second: 1 }));
      expect404(await defOrg.api.delete(`${foreign}/${otherEventId}`));
      expect404(await defOrg.api.get('/dashboard/v1/organizations/abc/events'));
      const v = await defOrg.as('viewer');
      expect((await v.get(base)).status).toBe(200);
      expect((await v.post(base, { event_type: 'annotation' })).status).toBe(403);
      expect((await anon.get(base)).status).toBe(401);
    });

    it('default events show up in every player’s CTA list with include_defaults', async () => {
      const pl = await createPlayer(defOrg.api);
      const list = await defOrg.api.get(`/dashboard/v1/players/${pl.id}/ctas?include_defaults=true`);
      const defaults = (await defOrg.api.get(base)).body.map((i: any) => i.event_id);
      expect(list.body.ctas.map((c: any) => c.id)).toEqual(defaults);
    });
  });
});
