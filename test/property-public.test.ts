/**
 * Property tests for what anyone on the internet can reach without a token: the watch and embed pages
 * (GET and the access code form), viewers' reports and oEmbed. Whatever comes in, never a 5xx, and
 * nothing is granted or sent for a request that was refused.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { extremeValue, nastyString, nastyValue } from './helpers/arbitraries.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
/** encodeURIComponent throws on lone surrogates; a client would have sent them as U+FFFD. */
const encode = (s: string) => encodeURIComponent(Buffer.from(s, 'utf8').toString('utf8'));

describe.each(dialects)('public pages under random input on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let uuid: string;
  let guarded: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    uuid = (await createPlayer(org.api, {}, 2)).uuid;
    guarded = (await createPlayer(org.api, { access_code: 'letmein' })).uuid;
    expect((await org.api.post(`/dashboard/v1/organizations/${org.organizationId}/webhooks/analytics`, { url: 'https://hooks.example.com/a' })).status).toBe(
      201,
    );
  });

  afterAll(() => t.close());

  const messages = async () => (await t.database.db.selectFrom('jobs').select('id').where('type', '=', 'webhook.notify').execute()).length;

  /** A path segment: the player's UUID, altered, or anything. */
  const segment = fc.oneof(
    fc.constant(() => uuid),
    fc.constant(() => uuid.toUpperCase()),
    fc.constant(() => `${uuid}x`),
    nastyString.map((s) => () => encode(s)),
    nastyString.map((s) => () => s.replace(/[/?#\s]/g, '')),
  );

  it('GET /watch and /embed: never a 5xx, whatever the address, query and headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('watch', 'embed'),
        segment,
        fc.dictionary(fc.string({ maxLength: 8 }), nastyString, { maxKeys: 3 }),
        fc.record(
          { cookie: nastyString, referer: nastyString, accept: fc.constantFrom('*/*', 'text/html', 'application/json', 'image/png', '') },
          { requiredKeys: [] },
        ),
        async (kind, id, query, headers) => {
          const qs = new URLSearchParams(query).toString();
          const res = await t.app.inject({ method: 'GET', url: `/${kind}/${id()}${qs ? `?${qs}` : ''}`, headers: headers as Record<string, string> });
          expect(res.statusCode, res.body).toBeLessThan(500);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('the access code form: never a 5xx, and nothing but the code opens the page', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(nastyString, fc.constant('letmein'), fc.constant(' letmein ')),
        fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data'),
        fc.boolean(),
        async (code, type, asJson) => {
          const payload = asJson ? JSON.stringify({ access_code: code }) : `access_code=${encode(code)}&x=${encode(code)}`;
          const res = await t.app.inject({
            method: 'POST',
            url: `/watch/${guarded}`,
            headers: { 'content-type': type },
            payload,
            remoteAddress: `198.51.100.${Math.floor(Math.random() * 250)}`,
          });
          expect(res.statusCode, res.body).toBeLessThan(500);
          const granted = res.statusCode === 303;
          expect(Boolean(res.headers['set-cookie'])).toBe(granted);
          if (granted) expect(code.trim()).toBe('letmein');
          if (!granted) expect(res.statusCode).toBeGreaterThanOrEqual(400);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("viewers' reports: never a 5xx, and a refused report sends nothing", async () => {
    const valid = fc.record({
      type: fc.constantFrom('view', 'identified_view', 'attention_span'),
      player_load_id: fc.constant('load'),
      visitor_uuid: fc.constant('visitor'),
      chapter: fc.constantFrom(0, 1),
      percent_watched: fc.constantFrom(0, 25, 50, 75, 100),
      email: fc.constant('a@example.com'),
      buckets: fc.constant(Array(20).fill(1)),
    });
    await fc.assert(
      fc.asyncProperty(
        valid,
        fc.constantFrom('type', 'player_load_id', 'visitor_uuid', 'chapter', 'percent_watched', 'email', 'buckets', 'embed_url', 'extra'),
        fc.oneof(nastyValue, extremeValue, fc.constant(undefined)),
        segment,
        async (body, field, value, id) => {
          const mutated: Record<string, unknown> = { ...body, [field]: value };
          if (value === undefined) delete mutated[field];
          const before = await messages();
          const res = await t.app.inject({
            method: 'POST',
            url: `/watch/${id()}/analytics`,
            payload: mutated,
            remoteAddress: `203.0.113.${Math.floor(Math.random() * 250)}`,
          });
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (res.statusCode !== 204) expect(await messages()).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('oEmbed: never a 5xx, whatever the URL and sizes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constant(() => `http://reelbase.test/watch/${uuid}`),
          fc.constant(() => `http://reelbase.test/embed/${uuid}/`),
          segment.map((id) => () => `http://reelbase.test/watch/${id()}`),
          nastyString.map((s) => () => s),
          fc.webUrl().map((u) => () => u),
        ),
        fc.dictionary(fc.constantFrom('maxwidth', 'maxheight', 'format', 'auth_token'), fc.oneof(nastyString, fc.integer().map(String)), { maxKeys: 3 }),
        fc.constantFrom('v1', 'v1.1'),
        async (url, extra, version) => {
          const qs = new URLSearchParams({ url: url(), ...extra }).toString();
          const res = await t.app.inject({ method: 'GET', url: `/dashboard/${version}/oembed?${qs}` });
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (res.statusCode >= 400) expect(JSON.parse(res.body)).toMatchObject({ error: expect.any(String), code: expect.any(String) });
        },
      ),
      { numRuns: RUNS },
    );
  });
});
