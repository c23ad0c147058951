/**
 * The wire conventions of DESIGN §2, driven through HTTP on the players and videos routes: where the
 * token may come from, body and media-type errors, content negotiation (JSON, CSV, XLSX), the error
 * body, X-Request-Id, query arrays, Idempotency-Key, the `.json` suffix and the redacted request log.
 */
import ExcelJS from 'exceljs';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from './helpers/csv.ts';
import { registerErrorHandling } from '../src/http/error-handler.ts';
import { parseQueryString, registerRequestParsing } from '../src/http/request-parsing.ts';
import { registerValidation } from '../src/http/validation.ts';
import { nowSeconds } from '../src/lib/time.ts';
import { client, createTestApp, dialects, type Response, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Every error answers {error: string, code, details: [{field, message}]} as JSON, with X-Request-Id. */
function expectError(res: Response, status: number, code: string) {
  expect(res.status, res.raw).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-request-id']).toBeTruthy();
  expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error.length).toBeGreaterThan(0);
  expect(res.body.code).toBe(code);
  expect(Array.isArray(res.body.details)).toBe(true);
  for (const d of res.body.details) {
    expect(Object.keys(d).sort()).toEqual(['field', 'message']);
    expect(typeof d.field).toBe('string');
    expect(typeof d.message).toBe('string');
  }
}

/** How a JSON value of a list item is expected to look in one CSV cell. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  // Numbers and booleans print the same either way; arrays and objects as JSON.
  return typeof value === 'string' ? value : JSON.stringify(value);
}

describe.each(dialects)('wire conventions on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  const anon = () => client(t.app);
  const playerCount = async (o: OrgContext) => ((await o.api.get(`${P}/players`)).body as unknown[]).length;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(() => t.close());

  describe('token', () => {
    it('is accepted as query parameter, JSON body attribute and Bearer header', async () => {
      const fromQuery = await anon().get(`${P}/players?auth_token=${encodeURIComponent(org.token)}`);
      expect(fromQuery.status).toBe(200);
      expect(Array.isArray(fromQuery.body)).toBe(true);

      const flat = await anon().post(`${P}/players`, { auth_token: org.token, name: 'Body token, flat' });
      expect(flat.status, flat.raw).toBe(201);
      expect(flat.body.name).toBe('Body token, flat');
      expect(flat.body).not.toHaveProperty('auth_token');

      const wrapped = await anon().post(`${P}/players`, { auth_token: org.token, player: { name: 'Body token, wrapped' } });
      expect(wrapped.status, wrapped.raw).toBe(201);

      const patched = await anon().patch(`${P}/players/${flat.body.id}`, { auth_token: org.token, name: 'Renamed by body token' });
      expect(patched.status).toBe(200);
      expect(patched.body.name).toBe('Renamed by body token');

      const bearer = await anon().get(`${P}/players/${flat.body.id}`, { authorization: `Bearer ${org.token}` });
      expect(bearer.status).toBe(200);
      expect(bearer.body.name).toBe('Renamed by body token');
      // The token picks the organization: the other one's token does not see the player.
      expectError(await anon().get(`${P}/players/${flat.body.id}`, { authorization: `Bearer ${other.token}` }), 404, 'not_found');
    });

    it('answers 401 without a token, for an unknown one wherever it is sent, and creates nothing', async () => {
      const before = await playerCount(org);
      expectError(await anon().get(`${P}/players`), 401, 'unauthorized');
      expectError(await anon().post(`${P}/players`, { name: 'no token' }), 401, 'unauthorized');
      expectError(await anon().get(`${P}/players?auth_token=rb_${'x'.repeat(43)}`), 401, 'unauthorized');
      expectError(await anon().get(`${P}/players?auth_token=`), 401, 'unauthorized');
      expectError(await anon().get(`${P}/players`, { authorization: 'Bearer not-a-token' }), 401, 'unauthorized');
      expectError(await anon().get(`${P}/players`, { authorization: `Basic ${org.token}` }), 401, 'unauthorized');
      expectError(await anon().post(`${P}/players`, { auth_token: 'not-a-token', name: 'x' }), 401, 'unauthorized');
      expectError(await anon().post(`${P}/players`, { auth_token: 12345, name: 'x' }), 401, 'unauthorized');
      expectError(await anon().get(`${P}/videos/1`), 401, 'unauthorized');
      expect(await playerCount(org)).toBe(before);
    });
  });

  describe('bodies', () => {
    it('answers 400 invalid_json for malformed JSON, creating nothing', async () => {
      const before = await playerCount(org);
      for (const raw of ['{"name": ', '{name: "x"}', "{'name': 'x'}", '{"name": "x",}', '[1, 2', 'nul', '{"a":1}{"b":2}']) {
        expectError(await org.api.post(`${P}/players`, raw), 400, 'invalid_json');
      }
      const p = await createPlayer(org.api, {}, 0);
      expectError(await org.api.patch(`${P}/players/${p.id}`, '{"name": "half'), 400, 'invalid_json');
      expectError(await org.api.post(`${P}/videos`, '{"video": {"name": }}'), 400, 'invalid_json');
      expect(await playerCount(org)).toBe(before + 1);
      expect((await org.api.get(`${P}/players/${p.id}`)).body.name).toBe(p.name);
    });

    it('answers 415 for a text/plain, XML or multipart body, creating nothing (form-encoded bodies are taken: test/form-bodies.test.ts)', async () => {
      const before = await playerCount(org);
      expectError(
        await org.api.post(`${P}/players`, '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n', {
          'content-type': 'multipart/form-data; boundary=b',
        }),
        415,
        'unsupported_media_type',
      );
      expectError(await org.api.post(`${P}/players`, '{"name":"Plain"}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
      expectError(await org.api.post(`${P}/players`, '{"name":"Plain"}', { 'content-type': 'text/plain; charset=utf-8' }), 415, 'unsupported_media_type');
      expectError(await org.api.post(`${P}/players`, '<player/>', { 'content-type': 'application/xml' }), 415, 'unsupported_media_type');
      expect(await playerCount(org)).toBe(before);
      // A JSON media type with parameters is still JSON.
      expect((await org.api.post(`${P}/players`, '{"name":"Charset"}', { 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
    });

    it('answers 413 payload_too_large for a body above BODY_LIMIT', async () => {
      const small = await createTestApp(dialect, { BODY_LIMIT: '2048' });
      try {
        const o = await createOrg(small);
        const res = await o.api.post(`${P}/players`, { name: 'Big', description: 'x'.repeat(3000) });
        expectError(res, 413, 'payload_too_large');
        expect((await o.api.get(`${P}/players`)).body).toEqual([]);
        // Just under the limit is fine.
        const ok = await o.api.post(`${P}/players`, { name: 'Fits', description: 'x'.repeat(1500) });
        expect(ok.status).toBe(201);
      } finally {
        await small.close();
      }
    });
  });

  describe('content negotiation', () => {
    it('answers 406 for an Accept it cannot produce, on lists and single records', async () => {
      const p = await createPlayer(org.api, {}, 0);
      expectError(await org.api.get(`${P}/players`, { accept: 'text/html' }), 406, 'not_acceptable');
      expectError(await org.api.get(`${P}/players/${p.id}`, { accept: 'text/html' }), 406, 'not_acceptable');
      expectError(await org.api.get(`${P}/players/${p.id}`, { accept: 'text/csv' }), 406, 'not_acceptable');
      expectError(await org.api.get(`${P}/players`, { accept: 'image/png, text/html;q=0.9' }), 406, 'not_acceptable');
      for (const accept of ['application/json', '*/*', 'application/*', 'text/html, application/json;q=0.1']) {
        const res = await org.api.get(`${P}/players`, { accept });
        expect(res.status, accept).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
      }
    });

    describe('CSV and XLSX of GET /players', () => {
      let o: OrgContext;
      let players: any[];

      beforeAll(async () => {
        o = await createOrg(t);
        await createPlayer(o.api, { name: 'Plain' }, 0);
        await createPlayer(o.api, { name: 'With, "quotes" and comma', whitelisted_embed_domains: ['a.com', 'b.com'], autoplay: true }, 2);
        await createPlayer(o.api, { name: 'Line\nbreak', description: 'multi\nline' }, 1);
        players = (await o.api.get(`${P}/players`)).body;
        expect(players).toHaveLength(3);
      });

      it('answers text/csv with a header row of flattened columns and one row per player', async () => {
        const res = await o.api.get(`${P}/players`, { accept: 'text/csv' });
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/csv/);
        expect(res.headers['x-request-id']).toBeTruthy();
        const [header, ...rows] = parseCsv(res.raw);
        expect(header).toEqual(Object.keys(players[0]));
        expect(header).toContain('chapters_attributes');
        expect(header).toContain('whitelisted_embed_domains');
        expect(rows).toHaveLength(players.length);
        rows.forEach((row, i) => {
          expect(row).toEqual(header.map((column) => cellText(players[i][column])));
        });
        // Arrays are JSON text that reads back to the nested data.
        const chapters = JSON.parse(rows[1][header.indexOf('chapters_attributes')]);
        expect(chapters).toEqual(players[1].chapters_attributes);
        expect(chapters[0].video_attributes.upload_url).toMatch(/^https:/);
        expect(JSON.parse(rows[1][header.indexOf('whitelisted_embed_domains')])).toEqual(['a.com', 'b.com']);
      });

      it('gives the same rows for the paged envelope (rows are the players, not the envelope)', async () => {
        const res = await o.api.get(`${P}/players?per_page=2&page=1`, { accept: 'text/csv' });
        expect(res.status).toBe(200);
        const [header, ...rows] = parseCsv(res.raw);
        expect(header).toEqual(Object.keys(players[0]));
        expect(rows.map((r) => Number(r[header.indexOf('id')]))).toEqual([players[0].id, players[1].id]);
      });

      it('answers an XLSX workbook that reads back to the same rows as the CSV', async () => {
        const csv = parseCsv((await o.api.get(`${P}/players`, { accept: 'text/csv' })).raw);
        const res = await t.app.inject({ method: 'GET', url: `${P}/players`, headers: { authorization: `Bearer ${o.token}`, accept: XLSX } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe(XLSX);
        expect(res.headers['x-request-id']).toBeTruthy();
        expect(res.rawPayload.subarray(0, 2).toString('latin1')).toBe('PK'); // a zip container
        const workbook = new ExcelJS.Workbook();
        await workbook.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
        expect(workbook.worksheets).toHaveLength(1);
        const sheet = workbook.worksheets[0];
        const columns = csv[0].length;
        const rows: string[][] = [];
        sheet.eachRow({ includeEmpty: true }, (row) => {
          rows.push(
            Array.from({ length: columns }, (_, i) => {
              const v = row.getCell(i + 1).value;
              return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
            }),
          );
        });
        expect(rows).toEqual(csv);
        // Numbers stay numbers in the workbook.
        expect(typeof sheet.getRow(2).getCell(csv[0].indexOf('id') + 1).value).toBe('number');
      });

      it('answers an empty list as a CSV without data rows', async () => {
        const empty = await createOrg(t);
        const res = await empty.api.get(`${P}/players`, { accept: 'text/csv' });
        expect(res.status).toBe(200);
        expect(parseCsv(res.raw).length).toBeLessThanOrEqual(1);
      });
    });
  });

  describe('errors and request ids', () => {
    it('puts X-Request-Id on every response, errors included, in the error body shape', async () => {
      const p = await createPlayer(org.api, {}, 0);
      const ok = await org.api.get(`${P}/players/${p.id}`);
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toBeTruthy();
      expectError(await anon().get(`${P}/players`), 401, 'unauthorized');
      expectError(await org.api.get(`${P}/no-such-route`), 404, 'route_not_found');
      expectError(await org.api.get('/nowhere'), 404, 'route_not_found');
      expectError(await org.api.get(`${P}/players/999999`), 404, 'not_found');
      expectError(await org.api.get(`${P}/players/not-a-number`), 404, 'not_found');
      expectError(await org.api.get(`${P}/players/uuid=${'a'.repeat(150)}`), 404, 'not_found');
      expectError(await org.api.post(`${P}/players`, '{'), 400, 'invalid_json');
      expectError(await org.api.get(`${P}/players`, { accept: 'text/html' }), 406, 'not_acceptable');
      expectError(await org.api.post(`${P}/players`, 'x', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
      expectError(await org.api.post(`${P}/players`, { player: {} }), 422, 'validation_failed');
      expectError(await org.api.get(`${P}/players?per_page=500`), 422, 'validation_failed');
      expectError(await (await org.as('viewer')).post(`${P}/players`, { name: 'x' }), 403, 'forbidden');
      // A malformed percent-encoding in the path is refused before routing, in the same shape.
      expectError(await org.api.get(`${P}/players/%zz`), 400, 'bad_request');
    });

    it('names the failing fields in details', async () => {
      const res = await org.api.post(`${P}/players`, { name: 'x', autoplay: 'yes', width: 'wide' });
      expectError(res, 422, 'validation_failed');
      expect(res.body.details.map((d: any) => d.field).sort()).toEqual(['autoplay', 'width']);
    });

    it('echoes a well-formed client X-Request-Id and replaces a malformed one', async () => {
      const given = await org.api.get(`${P}/players`, { 'x-request-id': 'client-id.42' });
      expect(given.headers['x-request-id']).toBe('client-id.42');
      const givenOnError = await anon().get(`${P}/players`, { 'x-request-id': 'client-id.43' });
      expect(givenOnError.headers['x-request-id']).toBe('client-id.43');
      const bad = await org.api.get(`${P}/players`, { 'x-request-id': 'has spaces and <html>' });
      expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
      const a = await org.api.get(`${P}/players`);
      const b = await org.api.get(`${P}/players`);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });
  });

  describe('arrays in the query', () => {
    it('reads name[]=x like name=x, and a repeated key as an array, on a real route', async () => {
      const o = await createOrg(t);
      await createPlayer(o.api, { name: 'Alpha' }, 0);
      await createPlayer(o.api, { name: 'Beta' }, 0);
      expect((await o.api.get(`${P}/players?query[]=Al`)).body.map((p: any) => p.name)).toEqual(['Alpha']);
      expect((await o.api.get(`${P}/players?query%5B%5D=Be`)).body.map((p: any) => p.name)).toEqual(['Beta']);
      // `query` is a single string: two values are an error, and a comma is not split.
      expectError(await o.api.get(`${P}/players?query=Al&query=Be`), 422, 'validation_failed');
      expect((await o.api.get(`${P}/players?query=Al,Be`)).body).toEqual([]);
    });

    describe('on a test-only app with an array query parameter', () => {
      // No production route takes an array yet, and buildApp returns an app that is already ready (no
      // routes can be added), so this app is assembled from the same foundation pieces and options.
      const mini = Fastify({ routerOptions: { querystringParser: parseQueryString } });
      registerErrorHandling(mini);
      registerValidation(mini);
      registerRequestParsing(mini);
      mini.get(
        '/echo',
        {
          schema: {
            querystring: Type.Object({
              states: Type.Optional(Type.Array(Type.Union([Type.Literal('upcoming'), Type.Literal('ongoing'), Type.Literal('finished')]))),
              ids: Type.Optional(Type.Array(Type.Integer())),
              name: Type.Optional(Type.String()),
            }),
          },
        },
        async (request) => request.query,
      );
      afterAll(() => mini.close());
      const get = async (qs: string) => {
        const res = await mini.inject({ method: 'GET', url: `/echo?${qs}` });
        return { status: res.statusCode, body: res.json() };
      };

      it('accepts the three forms alike', async () => {
        for (const qs of [
          'states[]=upcoming&states[]=ongoing',
          'states=upcoming&states=ongoing',
          'states=upcoming,ongoing',
          'states%5B%5D=upcoming&states%5B%5D=ongoing',
        ]) {
          expect(await get(qs), qs).toEqual({ status: 200, body: { states: ['upcoming', 'ongoing'] } });
        }
      });

      it('makes one value a one-item array, coerces items, and leaves string parameters whole', async () => {
        expect((await get('states=finished')).body).toEqual({ states: ['finished'] });
        expect((await get('states[]=finished')).body).toEqual({ states: ['finished'] });
        expect((await get('ids=1,2,3')).body).toEqual({ ids: [1, 2, 3] });
        expect((await get('ids[]=4&ids[]=5')).body).toEqual({ ids: [4, 5] });
        expect((await get('name=a,b')).body).toEqual({ name: 'a,b' });
        expect((await get('states=')).body).toEqual({ states: [] });
      });

      it('validates every item', async () => {
        const res = await get('states=upcoming,someday');
        expect(res.status).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details[0].field).toMatch(/^states/);
        expect((await get('ids[]=1&ids[]=x')).status).toBe(422);
      });
    });
  });

  describe('Idempotency-Key on POST /players', () => {
    const keyRow = (o: OrgContext, key: string) =>
      t.database.db.updateTable('idempotency_keys').where('organization_id', '=', o.organizationId).where('key', '=', key);

    it('replays the stored status and body for the same key and body, creating one player', async () => {
      const o = await createOrg(t);
      const body = { player: { name: 'Once', chapters_attributes: [{ position: 0, video_attributes: { name: 'V', upload_url: 'https://x.test/v.mp4' } }] } };
      const first = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-1' });
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-1' });
      expect(again.status).toBe(201);
      expect(again.raw).toBe(first.raw);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(again.headers['idempotent-replayed']).toBe('true');
      // Key order of the body and where the token is sent do not make it another request.
      const reordered = await client(t.app).post(
        `${P}/players`,
        { auth_token: o.token, player: { chapters_attributes: body.player.chapters_attributes, name: 'Once' } },
        { 'idempotency-key': 'k-1' },
      );
      expect(reordered.status).toBe(201);
      expect(reordered.body).toEqual(first.body);
      expect(await playerCount(o)).toBe(1);
      expect((await o.api.get(`${P}/videos`)).body).toHaveLength(1);
      // Without a key (or with another), the same body creates another player.
      expect((await o.api.post(`${P}/players`, body)).status).toBe(201);
      expect((await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-2' })).status).toBe(201);
      expect(await playerCount(o)).toBe(3);
    });

    it('replays a stored client error too', async () => {
      const o = await createOrg(t);
      const body = { name: 'Bad video', chapters_attributes: [{ video_id: 987654 }] };
      const first = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-err' });
      expectError(first, 422, 'validation_failed');
      const again = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-err' });
      expect(again.status).toBe(422);
      expect(again.raw).toBe(first.raw);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('answers 422 idempotency_key_reused for the same key with another body', async () => {
      const o = await createOrg(t);
      expect((await o.api.post(`${P}/players`, { name: 'First' }, { 'idempotency-key': 'k-reuse' })).status).toBe(201);
      expectError(await o.api.post(`${P}/players`, { name: 'Second' }, { 'idempotency-key': 'k-reuse' }), 422, 'idempotency_key_reused');
      expect((await o.api.get(`${P}/players`)).body.map((p: any) => p.name)).toEqual(['First']);
    });

    it('keeps keys per organization', async () => {
      const a = await createOrg(t);
      const b = await createOrg(t);
      const body = { name: 'Shared key' };
      const fromA = await a.api.post(`${P}/players`, body, { 'idempotency-key': 'k-shared' });
      const fromB = await b.api.post(`${P}/players`, body, { 'idempotency-key': 'k-shared' });
      expect(fromA.status).toBe(201);
      expect(fromB.status).toBe(201);
      expect(fromB.headers['idempotent-replayed']).toBeUndefined();
      expect(fromB.body.id).not.toBe(fromA.body.id);
      expect(await playerCount(a)).toBe(1);
      expect(await playerCount(b)).toBe(1);
      // Another body under the same key in B is B's own conflict, whatever A sent.
      expectError(await b.api.post(`${P}/players`, { name: 'Other' }, { 'idempotency-key': 'k-shared' }), 422, 'idempotency_key_reused');
    });

    it('answers 409 idempotency_in_progress while the first request still runs', async () => {
      const o = await createOrg(t);
      const body = { name: 'Slow' };
      expect((await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-running' })).status).toBe(201);
      // The window between claiming a key and storing its answer cannot be hit deterministically through
      // HTTP (inject runs the first request to its end), so the row is put back into the state it has
      // during that window, directly in the database.
      await keyRow(o, 'k-running').set({ state: 'running', response_status: null, response_body: null, response_type: null }).execute();
      expectError(await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-running' }), 409, 'idempotency_in_progress');
      expect(await playerCount(o)).toBe(1);
    });

    it('executes a key again once it is older than 24 hours', async () => {
      const o = await createOrg(t);
      const body = { name: 'Daily' };
      const first = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-old' });
      expect(first.status).toBe(201);
      // Ageing a key takes a day of wall-clock time: its created_at is moved back in the database instead.
      await keyRow(o, 'k-old')
        .set({ created_at: nowSeconds() - 25 * 60 * 60 })
        .execute();
      const fresh = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-old' });
      expect(fresh.status).toBe(201);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
      expect(fresh.body.id).not.toBe(first.body.id);
      expect(await playerCount(o)).toBe(2);
      // ...and the new execution is the one replayed from now on.
      const replay = await o.api.post(`${P}/players`, body, { 'idempotency-key': 'k-old' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.id).toBe(fresh.body.id);
    });

    it('refuses an empty or over-long key', async () => {
      const o = await createOrg(t);
      expectError(await o.api.post(`${P}/players`, { name: 'x' }, { 'idempotency-key': 'k'.repeat(256) }), 400, 'bad_request');
      expect(await playerCount(o)).toBe(0);
    });
  });

  describe('.json suffix', () => {
    it('answers every players and videos path with .json like the bare path', async () => {
      const created = await org.api.post(`${P}/players.json`, {
        player: { name: 'Suffixed', chapters_attributes: [{ position: 0, video_attributes: { name: 'S', upload_url: 'https://x.test/s.mp4' } }] },
      });
      expect(created.status).toBe(201);
      const id = created.body.id;
      const videoId = created.body.chapters_attributes[0].video_id;
      expect((await org.api.get(`${P}/players/${id}.json`)).body).toEqual((await org.api.get(`${P}/players/${id}`)).body);
      expect((await org.api.get(`${P}/players.json`)).body).toEqual((await org.api.get(`${P}/players`)).body);
      expect((await org.api.get(`${P}/players.json?per_page=1`)).body.summary.per_page).toBe(1);
      expect((await org.api.get(`${P}/players/uuid=${created.body.uuid}.json`)).body.id).toBe(id);
      expect((await org.api.patch(`${P}/players/${id}.json`, { name: 'Suffixed 2' })).body.name).toBe('Suffixed 2');
      expect((await org.api.get(`${P}/videos/${videoId}.json`)).body.id).toBe(videoId);
      expect((await org.api.get(`${P}/videos.json`)).status).toBe(200);
      expect((await org.api.get(`${P}/players.json`, { accept: 'text/csv' })).headers['content-type']).toMatch(/^text\/csv/);
      expect((await org.api.delete(`${P}/players/${id}.json`)).status).toBe(200);
      expectError(await org.api.get(`${P}/players/${id}.json`), 404, 'not_found');
    });
  });

  describe('request log', () => {
    it('redacts the token from URLs and never writes it, in any form it is sent', async () => {
      const lines: string[] = [];
      const logged = await createTestApp(dialect, { LOG_LEVEL: 'info' }, { logStream: { write: (line: string) => void lines.push(line) } });
      try {
        const o = await createOrg(logged);
        const anonymous = client(logged.app);
        const token = o.token;
        const encoded = encodeURIComponent(token);
        expect((await anonymous.get(`${P}/players?auth_token=${encoded}`)).status).toBe(200);
        expect((await anonymous.get(`${P}/players.json?per_page=5&auth_token=${encoded}`)).status).toBe(200);
        expect((await anonymous.get(`${P}/players?auth%5Ftoken=${encoded}`)).status).toBe(200);
        expect((await anonymous.get(`${P}/players?auth_token[]=${encoded}`)).status).toBe(401);
        expect((await anonymous.get(`${P}/players/%zz?auth_token=${encoded}`)).status).toBe(400);
        expect((await anonymous.get(`${P}/nowhere?auth_token=${encoded}`)).status).toBe(404);
        expect((await anonymous.post(`${P}/players`, { auth_token: token, name: 'Logged' })).status).toBe(201);
        expect((await anonymous.post(`${P}/players`, `{"auth_token": "${token}", "name": `)).status).toBe(400);
        expect((await anonymous.get(`${P}/players`, { authorization: `Bearer ${token}` })).status).toBe(200);
        expect((await anonymous.get(`${P}/players?auth_token=rb_wrong-token-value`)).status).toBe(401);

        const text = lines.join('');
        expect(lines.length).toBeGreaterThan(10);
        const entries = lines.map((l) => JSON.parse(l));
        const urls = entries.filter((e) => e.req).map((e) => e.req.url as string);
        expect(urls).toContain(`${P}/players?auth_token=[REDACTED]`);
        expect(urls).toContain(`${P}/players?auth%5Ftoken=[REDACTED]`);
        expect(text).toContain('[REDACTED]');
        expect(text).not.toContain(token);
        expect(text).not.toContain(encoded);
        expect(text).not.toContain(token.slice(3, 20));
        expect(text).not.toContain('rb_wrong-token-value');
        // Every line carries the request id that the response carried.
        expect(entries.filter((e) => e.req).every((e) => typeof e.reqId === 'string')).toBe(true);
      } finally {
        await logged.close();
      }
    });
  });
});
