/**
 * Rails clients send `application/x-www-form-urlencoded` bodies with bracket keys (HTTParty does for a
 * Hash `body:`). They must get exactly what the JSON request gets (docs/api-decisions.md, "Form-encoded
 * bodies"). The last case drives the real HTTParty (Debian's ruby-httparty, installed by .ci/run).
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, unique, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A scalar as a form writes it: nil as empty, numbers and booleans as their text. */
const text = (v: unknown) => (v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** A form body the way HTTParty writes one: `a[b]` for hashes, `a[]` for every item of an array. */
function railsForm(value: Record<string, unknown>): string {
  const pairs: string[] = [];
  const walk = (key: string, v: unknown) => {
    if (Array.isArray(v)) {
      if (v.length === 0) pairs.push(`${encodeURIComponent(`${key}[]`)}=`);
      for (const item of v) walk(`${key}[]`, item);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) walk(`${key}[${k}]`, inner);
    } else pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(text(v))}`);
  };
  for (const [k, v] of Object.entries(value)) walk(k, v);
  return pairs.join('&');
}

/** The same, with indexed arrays (`a[0][x]`), as Rails' own form helpers and `to_query` write them. */
function indexedForm(value: Record<string, unknown>): string {
  const pairs: string[] = [];
  const walk = (key: string, v: unknown) => {
    if (Array.isArray(v)) v.forEach((item, i) => walk(`${key}[${i}]`, item));
    else if (v !== null && typeof v === 'object') for (const [k, inner] of Object.entries(v)) walk(`${key}[${k}]`, inner);
    else pairs.push(`${key}=${encodeURIComponent(text(v))}`);
  };
  for (const [k, v] of Object.entries(value)) walk(k, v);
  return pairs.join('&');
}

/** The answer without what differs between two creations (ids, uuids, times, keys, addresses). */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (/^(id|uuid|email)$|_id$|_ids$|_at$|_date$|_key$|_url$|^url$|token/.test(k)) continue;
      out[k] = stable(v);
    }
    return out;
  }
  return value;
}

describe.each(dialects)('form-encoded bodies on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  const readmePlayer = () => ({
    player: {
      name: 'Launch',
      description: 'Our launch',
      default_hd: true,
      chapters_attributes: [
        { position: 0, video_attributes: { name: 'Intro', upload_url: 'https://media.example.com/intro.mp4' } },
        { position: 1, video_attributes: { name: 'Demo', upload_url: 'https://media.example.com/demo.mp4' } },
      ],
    },
  });

  it("creates the README's player from a Rails form body (both array forms) as from JSON", async () => {
    const json = await org.api.post(`${P}/players.json`, readmePlayer());
    expect(json.status).toBe(201);
    for (const form of [railsForm(readmePlayer()), indexedForm(readmePlayer())]) {
      const res = await org.api.post(`${P}/players.json`, form, FORM);
      expect(res.status, res.raw).toBe(201);
      expect(stable(res.body)).toEqual(stable(json.body));
      expect(res.body.chapters_attributes).toHaveLength(2);
      expect(res.body.default_hd).toBe(true);
    }
  });

  it("creates the README's player of existing videos (chapters by video_id) from a form body as from JSON", async () => {
    const video = async (name: string) => (await org.api.post(`${P}/videos`, { name, upload_url: 'https://media.example.com/v.mp4' })).body.id as number;
    const body = {
      player: {
        name: 'Launch',
        chapters_attributes: [
          { position: 0, video_id: await video('Intro') },
          { position: 1, video_id: await video('Demo') },
        ],
      },
    };
    const json = await org.api.post(`${P}/players`, body);
    const form = await org.api.post(`${P}/players`, railsForm(body), FORM);
    expect(form.status, form.raw).toBe(201);
    expect(stable(form.body)).toEqual(stable(json.body));
    expect(form.body.chapters_attributes.map((c: { video_id: number }) => c.video_id)).toEqual(
      json.body.chapters_attributes.map((c: { video_id: number }) => c.video_id),
    );
  });

  it('creates CTAs, live streams and users as from JSON, with values typed by the schema', async () => {
    const player = await createPlayer(org.api);
    const chapterId = player.chapters_attributes[0].id as number;
    const cases: Array<[string, Record<string, unknown>]> = [
      [`${P}/ctas`, { cta: { chapter_id: chapterId, second: 10, duration: 5, width: 300, html: '<a href="https://example.com">Book a demo</a>' } }],
      [
        `${P}/organizations/${org.organizationId}/live`,
        {
          video_options: { video_name: 'Launch event', description: 'Our launch', stream_tags: ['launch', 'q3'], segment_length: 10, dvr_enabled: true },
          stream_options: { recurring: true },
        },
      ],
    ];
    for (const [url, body] of cases) {
      const json = await org.api.post(url, body);
      expect(json.status, json.raw).toBe(201);
      const form = await org.api.post(url, railsForm(body), FORM);
      expect(form.status, form.raw).toBe(201);
      expect(stable(form.body)).toEqual(stable(json.body));
    }
    const user = (email: string) => ({ email, first_name: 'Ada', last_name: 'Lovelace', role_id: 3 });
    const jsonUser = await org.api.post(`${P}/users`, user(`${unique('ada').replace(/\W+/g, '.')}@example.com`));
    const formUser = await org.api.post(`${P}/users`, railsForm(user(`${unique('ada').replace(/\W+/g, '.')}@example.com`)), FORM);
    expect(formUser.status, formUser.raw).toBe(201);
    expect(stable(formUser.body)).toEqual(stable(jsonUser.body));
  });

  it('answers invalid values with the same 422 as JSON, and creates nothing', async () => {
    const player = await createPlayer(org.api);
    const chapterId = player.chapters_attributes[0].id as number;
    const bad = { chapter_id: chapterId, second: 10, duration: 5, width: 99, html: 'x' };
    const json = await org.api.post(`${P}/ctas`, bad);
    const form = await org.api.post(`${P}/ctas`, railsForm(bad), FORM);
    expect(json.status).toBe(422);
    expect(form.status).toBe(422);
    expect(form.body).toEqual(json.body);
    // A string that is no number stays a string, for the schema to refuse.
    const notNumber = await org.api.post(`${P}/ctas`, railsForm({ ...bad, width: 300, second: 'ten' }), FORM);
    expect(notNumber.status).toBe(422);
    expect(notNumber.body.details).toEqual([expect.objectContaining({ field: 'second' })]);
    const list = await org.api.get(`${P}/chapters/${chapterId}/ctas`);
    expect(list.body).toEqual({ ctas: [], summary: expect.objectContaining({ count: 0 }) });
  });

  it('takes the token from the form body, as from a JSON body', async () => {
    const anonymous = (await import('./helpers/harness.ts')).client(t.app);
    const res = await anonymous.post(`${P}/tags`, railsForm({ auth_token: org.token, name: unique('tag') }), FORM);
    expect(res.status, res.raw).toBe(201);
    const denied = await anonymous.post(`${P}/tags`, railsForm({ auth_token: 'wrong', name: unique('tag') }), FORM);
    expect(denied.status).toBe(401);
  });

  it('refuses a body Rack cannot parse with 400, and multipart with 415', async () => {
    const org = await createOrg(t);
    for (const body of ['name=%zz', 'a=1&a[]=2', '__proto__[x]=1']) {
      const res = await org.api.post(`${P}/tags`, body, FORM);
      expect(res.status, body).toBe(400);
      expect(res.body.code).toBe('invalid_form');
    }
    const multipart = await org.api.post(`${P}/tags`, '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n', {
      'content-type': 'multipart/form-data; boundary=b',
    });
    expect(multipart.status).toBe(415);
    expect((await org.api.get(`${P}/tags`)).body).toEqual([]);
  });

  it('serves a real HTTParty client posting a Hash body', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const script = `
      require "httparty"; require "json"
      r = HTTParty.post(ARGV[0], body: JSON.parse(STDIN.read), headers: { "Authorization" => "Bearer #{ARGV[1]}" })
      print JSON.generate({ "status" => r.code, "body" => JSON.parse(r.body) })`;
    const run = promisify(execFile);
    const child = run('ruby', ['-e', script, `http://127.0.0.1:${port}${P}/players.json`, org.token]);
    child.child.stdin!.end(JSON.stringify(readmePlayer()));
    const { stdout } = await child;
    const answer = JSON.parse(stdout) as { status: number; body: Record<string, unknown> };
    expect(answer.status).toBe(201);
    const json = await org.api.post(`${P}/players`, readmePlayer());
    expect(stable(answer.body)).toEqual(stable(json.body));
  });
});
