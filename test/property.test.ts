/**
 * Property tests: random bodies, query strings and headers thrown at the players and CTA operations.
 * Whatever comes in, the service never answers a 5xx, every 4xx carries the error body, and a rejected
 * request leaves no trace (the organization's players, videos and CTAs read back deep-equal).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { extremeValue, nastyNumber, nastyString, nastyValue } from './helpers/arbitraries.ts';

const P = '/dashboard/v1';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** Runs per property: enough to find the edges, small enough to keep the file under ~30 s per dialect. */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);

/** Writes `value` at a dotted path (numeric segments index arrays), creating what is missing. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const root = structuredClone(target);
  const keys = path.split('.');
  let at: any = root;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i];
    if (at[key] === null || typeof at[key] !== 'object') at[key] = /^\d+$/.test(keys[i + 1]) ? [] : {};
    at = at[key];
  }
  at[keys[keys.length - 1]] = value;
  return root;
}

function removePath(target: Record<string, unknown>, path: string): Record<string, unknown> {
  const root = structuredClone(target);
  const keys = path.split('.');
  let at: any = root;
  for (const key of keys.slice(0, -1)) {
    if (at === null || typeof at !== 'object') return root;
    at = at[key];
  }
  if (at && typeof at === 'object') delete at[keys[keys.length - 1]];
  return root;
}

/**
 * A valid body with one or two fields mutated: replaced by a random or an extreme value, removed, or
 * joined by an unknown key; sometimes wrapped Rails-style. These reach past schema validation into the
 * services and the database.
 */
function nearValid(valid: fc.Arbitrary<Record<string, unknown>>, fields: string[], wrap: string) {
  const mutation = fc.oneof(
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('set' as const), field: fc.constantFrom(...fields), value: nastyValue }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('set' as const), field: fc.constantFrom(...fields), value: extremeValue }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), field: fc.constantFrom(...fields) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('extra' as const), field: fc.string({ maxLength: 12 }), value: nastyValue }) },
  );
  return fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 2 }), fc.boolean()).map(([body, mutations, wrapped]) => {
    let mutated = body;
    for (const m of mutations) mutated = m.kind === 'remove' ? removePath(mutated, m.field) : setPath(mutated, m.field, m.value);
    return wrapped ? { [wrap]: mutated } : mutated;
  });
}

/** Any body: a random JSON value, an object of random keys, or a near-valid one (weighted towards the last). */
function anyBody(valid: fc.Arbitrary<Record<string, unknown>>, fields: string[], wrap: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    {
      weight: 1,
      arbitrary: fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom(...fields.map((f) => f.split('.')[0]))), nastyValue, { maxKeys: 6 }),
    },
    {
      weight: 1,
      arbitrary: fc.dictionary(fc.constantFrom(wrap), fc.dictionary(fc.constantFrom(...fields.map((f) => f.split('.')[0])), nastyValue, { maxKeys: 4 })),
    },
    { weight: 4, arbitrary: nearValid(valid, fields, wrap) },
  );
}

/** How the body goes on the wire: usually JSON, sometimes raw text or another media type. */
const encoding = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ type: 'application/json', raw: null as string | null }) },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('application/json'),
      raw: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('{', '{"name":', 'null', '[]', '""', '{"a":1}}', '\u0000')),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/xml',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-8',
        'application/merge-patch+json',
      ),
      raw: fc.constant(null),
    }),
  },
);

const idempotencyKey = fc.option(fc.constantFrom('prop-key-1', 'prop-key-2'), { freq: 4 });

/** encodeURIComponent, which throws on a lone surrogate: that one goes as U+FFFD (raw bad UTF-8 is sent below). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(Buffer.from(text).toString('utf8'));
  }
}

/**
 * A query string of known and unknown parameters, raw escapes included; half the time it starts with a
 * valid per_page, so that an extreme page (or other parameter) reaches the service.
 */
function queryString(known: string[]) {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known, ...known.map((k) => `${k}[]`)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map(encode) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'auth_token', '%zz', '%00', '') },
  );
  const value = fc.oneof(
    { weight: 3, arbitrary: nastyNumber.map((n) => encode(String(n))) },
    { weight: 2, arbitrary: extremeValue.map((v) => encode(String(v).slice(0, 300))) },
    { weight: 3, arbitrary: nastyString.map((s) => encode(s)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'true',
        'false',
        '1,2',
        ',',
        '%',
        '%zz',
        '%00',
        '%C3',
        '%ED%A0%80',
        '%FF',
        '+',
        '1e3',
        '1e21',
        '0x10',
        ' 5',
        '5 ',
        '9999999999999999999',
      ),
    },
  );
  const pairs = fc.array(fc.tuple(key, value), { maxLength: 5 }).map((list) => list.map(([k, v]) => `${k}=${v}`));
  const validPerPage = fc.option(
    fc.integer({ min: 1, max: 200 }).map((n) => `per_page=${n}`),
    { freq: 2 },
  );
  return fc.tuple(validPerPage, pairs).map(([perPage, rest]) => [...(perPage ? [perPage] : []), ...rest].join('&'));
}

const acceptHeader = fc.option(
  fc.oneof(
    fc.constantFrom('application/json', 'text/csv', XLSX, 'text/html', '*/*', 'text/*', 'application/json;q=0', 'text/csv;q=abc, */*;q=0.1'),
    fc.string({ maxLength: 20 }),
  ),
  { freq: 3 },
);

// ---- the properties --------------------------------------------------------------------------

interface Outcome {
  status: number;
  headers: Record<string, unknown>;
  text: string;
}

describe.each(dialects)('random input on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let base: any;
  let foreign: any;
  let baseCta: any;
  let foreignCta: any;
  let known: unknown;
  let baseHub: { id: number } | undefined;

  /** Everything a request could have changed, read through the API. */
  async function snapshot() {
    const get = async (url: string, o = org) => {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${o.token}` } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      return res.json();
    };
    const [players, videos, foreignPlayers, ctas, foreignCtas, hubs] = await Promise.all([
      get(`${P}/players`),
      get(`${P}/videos`),
      get(`${P}/players`, other),
      get(`${P}/players/${base.id}/ctas?include_defaults=true`),
      get(`${P}/players/${foreign.id}/ctas?include_defaults=true`, other),
      get(`${P}/hubs`),
    ]);
    const categories = baseHub ? await get(`${P}/hubs/${baseHub.id}/categories`) : [];
    return { players, videos, foreignPlayers, ctas, foreignCtas, hubs, categories };
  }

  async function send(
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    body: unknown,
    enc: { type: string; raw: string | null },
    headers: Record<string, string> = {},
  ): Promise<Outcome> {
    const all: Record<string, string> = { authorization: `Bearer ${org.token}`, ...headers };
    let payload: string | undefined;
    if (method !== 'GET') {
      all['content-type'] = enc.type;
      // For another media type the body is still some JSON text: the type alone must decide.
      payload = enc.raw ?? JSON.stringify(body) ?? 'null';
    }
    const res = await t.app.inject({ method, url, headers: all, ...(payload === undefined ? {} : { payload }) });
    return { status: res.statusCode, headers: res.headers, text: res.body };
  }

  /** The three assertions every run makes (a successful GET cannot have changed anything: no new snapshot). */
  async function check(what: string, out: Outcome, readOnly = false) {
    const context = `${what} → ${out.status} ${out.text.slice(0, 300)}`;
    expect(out.status, context).toBeLessThan(500);
    expect(out.headers['x-request-id'], context).toBeTruthy();
    if (out.status >= 400) {
      expect(out.headers['content-type'], context).toMatch(/^application\/json/);
      const body = JSON.parse(out.text);
      expect(Object.keys(body).sort(), context).toEqual(['code', 'details', 'error']);
      expect(typeof body.error, context).toBe('string');
      expect(typeof body.code, context).toBe('string');
      expect(Array.isArray(body.details), context).toBe(true);
      for (const d of body.details) expect(typeof d.field === 'string' && typeof d.message === 'string', context).toBe(true);
      // A rejected request changed nothing.
      expect(await snapshot(), `${context}: state changed`).toEqual(known);
    } else if (!readOnly) {
      known = await snapshot();
    }
  }

  /**
   * Each property works in an organization of its own (a base player with two chapters and a CTA), so
   * that what earlier properties created does not slow down its snapshots.
   */
  async function freshOrganization() {
    org = await createOrg(t);
    base = await createPlayer(org.api, { name: 'Base' }, 2);
    const res = await org.api.post(`${P}/ctas`, { chapter_id: base.chapters_attributes[0].id, second: 5, duration: 10, width: 300, html: '<b>hi</b>' });
    expect(res.status, `POST /ctas (the base CTA): ${res.raw}`).toBe(201);
    baseCta = res.body;
    known = await snapshot();
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    other = await createOrg(t);
    foreign = await createPlayer(other.api, { name: 'Foreign' }, 1);
    // The CTA routes are always mounted: were they not, this fails here (route_not_found) instead of
    // the CTA properties quietly skipping themselves.
    const res = await other.api.post(`${P}/ctas`, { chapter_id: foreign.chapters_attributes[0].id, second: 5, duration: 10, width: 300, html: '<b>hi</b>' });
    expect(res.status, `POST /ctas (the foreign CTA): ${res.raw}`).toBe(201);
    foreignCta = res.body;
    expect(foreignCta.id).toBeTypeOf('number');
  });
  afterAll(() => t.close());

  // ---- players --------------------------------------------------------------------------------

  const chapterInput = fc.record(
    {
      position: fc.nat(4),
      video_attributes: fc.record({
        name: fc.string({ minLength: 1, maxLength: 12 }),
        upload_url: fc.constantFrom('https://media.example.com/a.mp4', 'http://x.test/b.mov'),
      }),
    },
    { requiredKeys: ['video_attributes'] },
  );
  const playerFields = [
    'name',
    'autoplay',
    'width',
    'height',
    'color',
    'playlist_color',
    'release_date',
    'expiry_date',
    'redirect_url',
    'custom_sharing_link',
    'whitelisted_embed_domains',
    'access_code',
    'description',
    'on_complete',
    'mute_onload',
    'auth_token',
    'chapters_attributes',
    'chapters_attributes.0',
    'chapters_attributes.0.position',
    'chapters_attributes.0.id',
    'chapters_attributes.0._destroy',
    'chapters_attributes.0.video_id',
    'chapters_attributes.0.video_attributes',
    'chapters_attributes.0.video_attributes.name',
    'chapters_attributes.0.video_attributes.upload_url',
    'chapters_attributes.1.video_attributes.upload_url',
  ];
  const validPlayer = fc.record(
    {
      name: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0),
      autoplay: fc.boolean(),
      width: fc.integer({ min: 1, max: 7680 }),
      height: fc.integer({ min: 1, max: 4320 }),
      color: fc.constantFrom('#FF00AA', '00ff00'),
      whitelisted_embed_domains: fc.constantFrom(['a.com'], 'a.com, b.com', []),
      release_date: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      chapters_attributes: fc.array(chapterInput, { maxLength: 2 }),
    },
    { requiredKeys: ['name'] },
  );

  it('POST /players: never a 5xx, errors well-formed, a rejection changes nothing', async () => {
    await freshOrganization();
    await fc.assert(
      fc.asyncProperty(anyBody(validPlayer, playerFields, 'player'), encoding, idempotencyKey, async (body, enc, key) => {
        const out = await send('POST', `${P}/players`, body, enc, key ? { 'idempotency-key': key } : {});
        await check(`POST /players ${enc.type} ${enc.raw ?? JSON.stringify(body)}`, out);
      }),
      { numRuns: RUNS + 50 },
    );
  });

  it('PATCH /players/:id: never a 5xx, errors well-formed, a rejection changes nothing', async () => {
    await freshOrganization();
    const validUpdate = validPlayer.map((b) => {
      const { name: _name, chapters_attributes: _chapters, ...rest } = b;
      return rest;
    });
    const chapterEdits = fc.constantFrom(
      [{ id: base.chapters_attributes[0].id, position: 1 }],
      [{ id: foreign.chapters_attributes[0].id, _destroy: true }],
      [{ id: 2147483647, position: 0 }],
      [{ video_id: foreign.chapters_attributes[0].video_id }],
      [{ video_id: base.chapters_attributes[1].video_id, position: 0 }],
    );
    const body = fc.oneof(
      { weight: 4, arbitrary: anyBody(validUpdate, playerFields, 'player') },
      { weight: 1, arbitrary: fc.tuple(validUpdate, chapterEdits).map(([b, chapters_attributes]) => ({ ...b, chapters_attributes })) },
    );
    const id = fc.oneof(
      { weight: 6, arbitrary: fc.constant(String(base.id)) },
      { weight: 1, arbitrary: fc.constant(String(foreign.id)) },
      { weight: 1, arbitrary: fc.oneof(nastyNumber.map(String), fc.string({ maxLength: 8 })).map(encode) },
      { weight: 1, arbitrary: fc.constant(`uuid=${base.uuid}`) },
    );
    await fc.assert(
      fc.asyncProperty(id, body, encoding, async (pid, b, enc) => {
        const out = await send('PATCH', `${P}/players/${pid}`, b, enc);
        await check(`PATCH /players/${pid} ${enc.type} ${enc.raw ?? JSON.stringify(b)}`, out);
      }),
      { numRuns: RUNS },
    );
  });

  it('GET /players: never a 5xx whatever the query string and Accept', async () => {
    await freshOrganization();
    await fc.assert(
      fc.asyncProperty(queryString(['per_page', 'page', 'query']), acceptHeader, fc.boolean(), async (qs, accept, suffix) => {
        const url = `${P}/players${suffix ? '.json' : ''}${qs ? `?${qs}` : ''}`;
        const out = await send('GET', url, undefined, { type: '', raw: null }, accept === null ? {} : { accept });
        await check(`GET ${url} accept=${accept}`, out, true);
      }),
      { numRuns: RUNS },
    );
  });

  // ---- CTAs -----------------------------------------------------------------------------------

  const ctaFields = ['chapter_id', 'second', 'duration', 'width', 'html', 'auto_close', 'auth_token'];
  const validCta = () =>
    fc.record(
      {
        chapter_id: fc.constantFrom(base.chapters_attributes[0].id, base.chapters_attributes[1].id, null),
        second: fc.integer({ min: -1, max: 3600 }),
        duration: fc.option(fc.integer({ min: 0, max: 600 })),
        auto_close: fc.boolean(),
        width: fc.integer({ min: 100, max: 500 }),
        html: fc.string({ maxLength: 40 }),
      },
      { requiredKeys: ['second', 'width', 'html'] },
    );

  it('POST /ctas: never a 5xx, errors well-formed, a rejection changes nothing', async () => {
    await freshOrganization();
    const foreignChapter = fc.constant({ chapter_id: foreign.chapters_attributes[0].id, second: 1, duration: 5, width: 200, html: 'x' });
    const body = fc.oneof({ weight: 8, arbitrary: anyBody(validCta(), ctaFields, 'cta') }, { weight: 1, arbitrary: foreignChapter });
    await fc.assert(
      fc.asyncProperty(body, encoding, idempotencyKey, async (b, enc, key) => {
        const out = await send('POST', `${P}/ctas`, b, enc, key ? { 'idempotency-key': `cta-${key}` } : {});
        await check(`POST /ctas ${enc.type} ${enc.raw ?? JSON.stringify(b)}`, out);
      }),
      { numRuns: RUNS },
    );
  });

  it('PATCH /ctas/:id: never a 5xx, errors well-formed, a rejection changes nothing', async () => {
    await freshOrganization();
    const validUpdate = validCta().map(({ chapter_id: _c, ...rest }) => rest as Record<string, unknown>);
    const id = fc.oneof(
      { weight: 6, arbitrary: fc.constant(String(baseCta.id)) },
      { weight: 1, arbitrary: fc.constant(String(foreignCta.id)) },
      { weight: 1, arbitrary: fc.oneof(nastyNumber.map(String), fc.string({ maxLength: 8 })).map(encode) },
    );
    await fc.assert(
      fc.asyncProperty(id, anyBody(validUpdate, ctaFields, 'cta'), encoding, async (cid, b, enc) => {
        const out = await send('PATCH', `${P}/ctas/${cid}`, b, enc);
        await check(`PATCH /ctas/${cid} ${enc.type} ${enc.raw ?? JSON.stringify(b)}`, out);
      }),
      { numRuns: RUNS },
    );
  });

  it('GET /players/:id/ctas: never a 5xx whatever the id, query string and Accept', async () => {
    await freshOrganization();
    const id = fc.oneof(
      { weight: 4, arbitrary: fc.constant(String(base.id)) },
      { weight: 1, arbitrary: fc.constant(String(foreign.id)) },
      { weight: 1, arbitrary: fc.constant(`uuid=${base.uuid}`) },
      { weight: 1, arbitrary: fc.oneof(nastyNumber.map(String), fc.string({ maxLength: 8 })).map(encode) },
    );
    await fc.assert(
      fc.asyncProperty(id, queryString(['per_page', 'page', 'include_defaults']), acceptHeader, async (pid, qs, accept) => {
        const url = `${P}/players/${pid}/ctas${qs ? `?${qs}` : ''}`;
        const out = await send('GET', url, undefined, { type: '', raw: null }, accept === null ? {} : { accept });
        await check(`GET ${url} accept=${accept}`, out, true);
      }),
      { numRuns: RUNS },
    );
  });

  // ---- hubs: one property over both create bodies ----------------------------------------------
  const hubFields = ['name', 'slug', 'description', 'public', 'position', 'player_ids', 'player_ids.0'];
  const hubArbs = () => ({ slug: fc.stringMatching(/^[a-z0-9]{1,6}(-[a-z0-9]{1,3})?$/), description: fc.option(fc.string({ maxLength: 20 })) });
  const validHubOrCategory = () =>
    fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 12 }),
        ...hubArbs(),
        public: fc.boolean(),
        position: fc.nat(4),
        player_ids: fc.array(fc.constantFrom(base.id, foreign.id), { maxLength: 3 }),
      },
      { requiredKeys: ['name'] },
    );

  it('POST /hubs and /hubs/:id/categories: never a 5xx, errors well-formed, a rejection changes nothing', async () => {
    await freshOrganization();
    baseHub = (await org.api.post(`${P}/hubs`, { name: 'Base hub' })).body;
    known = await snapshot();
    await fc.assert(
      fc.asyncProperty(fc.boolean(), anyBody(validHubOrCategory(), hubFields, 'category'), encoding, async (hub, b, enc) => {
        const url = hub ? `${P}/hubs` : `${P}/hubs/${baseHub!.id}/categories`;
        await check(`POST ${url} ${enc.type} ${enc.raw ?? JSON.stringify(b)}`, await send('POST', url, b, enc));
      }),
      { numRuns: RUNS },
    );
  });
});
