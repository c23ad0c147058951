import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

const PROMPT_KEYS = ['content', 'ctaLink', 'id', 'type'];
const SCRIPT_KEYS = ['length', 'prompt', 'prompt_id', 'script', 'seconds', 'sections', 'title', 'topic', 'type', 'video_type'];

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe.each(dialects)('prompts on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  describe('GET /v1/prompts', () => {
    it('answers the built-in global prompt by default, with exactly the Prompt fields', async () => {
      const res = await org.api.get('/dashboard/v1/prompts');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(PROMPT_KEYS);
      expect(res.body.id).toBe(0);
      expect(res.body.type).toBe('global');
      expect(typeof res.body.content).toBe('string');
      expect(res.body.content).toContain('{{topic}}');
      expect(res.body.ctaLink).toBe('/v1/generate_script?type=global');
    });

    it('answers the same for type=global, GLOBAL and the .json suffix', async () => {
      const base = (await org.api.get('/dashboard/v1/prompts')).body;
      for (const url of ['/dashboard/v1/prompts?type=global', '/dashboard/v1/prompts?type=GLOBAL', '/dashboard/v1/prompts.json?type=global']) {
        const res = await org.api.get(url);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(base);
      }
    });

    it('answers 404 for a type with neither an organization nor a built-in prompt', async () => {
      const res = await org.api.get('/dashboard/v1/prompts?type=sales');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
      expect(res.body.error).toContain('sales');
    });

    it('validates type on both sides of its bounds', async () => {
      const empty = await org.api.get('/dashboard/v1/prompts?type=');
      expect(empty.status).toBe(422);
      expect(empty.body.details[0].field).toBe('type');
      expect((await org.api.get(`/dashboard/v1/prompts?type=${'a'.repeat(64)}`)).status).toBe(404);
      const long = await org.api.get(`/dashboard/v1/prompts?type=${'a'.repeat(65)}`);
      expect(long.status).toBe(422);
      expect(long.body.details[0].field).toBe('type');
      for (const bad of ['%00', 'a%20b', '-lead', 'x%27%3B--', '%E2%9C%93']) {
        const res = await org.api.get(`/dashboard/v1/prompts?type=${bad}`);
        expect(res.status, bad).toBe(422);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('needs a token (401); viewers may read', async () => {
      const anon = client(t.app);
      const res = await anon.get('/dashboard/v1/prompts');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
      const viewer = await org.as('viewer');
      expect((await viewer.get('/dashboard/v1/prompts')).status).toBe(200);
    });
  });

  describe('PUT and DELETE /v1/prompts (per-organization prompts)', () => {
    it('creates (201), replaces (200) and overrides the built-in only for that organization', async () => {
      const a = await createOrg(t);
      const b = await createOrg(t);
      const editor = await a.as('editor');

      const created = await editor.put('/dashboard/v1/prompts', { type: 'global', content: 'Pitch {{topic}}\n- Problem\n- Fix', ctaLink: '/scripts/new' });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(PROMPT_KEYS);
      expect(created.body.id).toBeGreaterThan(0);
      expect(created.body).toMatchObject({ type: 'global', content: 'Pitch {{topic}}\n- Problem\n- Fix', ctaLink: '/scripts/new' });

      const read = await a.api.get('/dashboard/v1/prompts');
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);

      const replaced = await a.api.put('/dashboard/v1/prompts', { content: '  Second version  ' });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toEqual({ id: created.body.id, type: 'global', content: 'Second version', ctaLink: '/v1/generate_script?type=global' });

      // Organization b still sees the built-in prompt.
      const other = await b.api.get('/dashboard/v1/prompts');
      expect(other.body.id).toBe(0);
      expect(other.body.content).not.toBe('Second version');
    });

    it('makes new types available, accepts the wrapped body and cta_link, and stores the type in lower case', async () => {
      const a = await createOrg(t);
      expect((await a.api.get('/dashboard/v1/prompts?type=sales')).status).toBe(404);
      const res = await a.api.put('/dashboard/v1/prompts', { prompt: { type: 'Sales', content: 'Sell {{topic}}', cta_link: 'https://example.com/buy' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ type: 'sales', content: 'Sell {{topic}}', ctaLink: 'https://example.com/buy' });
      const read = await a.api.get('/dashboard/v1/prompts?type=sales');
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
      const defaulted = await a.api.put('/dashboard/v1/prompts', { type: 'onboarding', content: 'Welcome' });
      expect(defaulted.body.ctaLink).toBe('/v1/generate_script?type=onboarding');
      const noLink = await a.api.put('/dashboard/v1/prompts', { type: 'bare', content: 'x', ctaLink: '' });
      expect(noLink.body.ctaLink).toBe('');
    });

    it('validates the body on both sides of each bound', async () => {
      const a = await createOrg(t);
      const cases: Array<[unknown, string]> = [
        [{}, 'content'],
        [{ content: '' }, 'content'],
        [{ content: '   \n ' }, 'content'],
        [{ content: 'x'.repeat(10_001) }, 'content'],
        [{ content: 42 }, 'content'],
        [{ content: 'a\u0000b' }, 'content'],
        [{ content: 'ok', type: '' }, 'type'],
        [{ content: 'ok', type: 'a'.repeat(65) }, 'type'],
        [{ content: 'ok', type: 'no spaces' }, 'type'],
        [{ content: 'ok', ctaLink: 'javascript:alert(1)' }, 'ctaLink'],
        [{ content: 'ok', ctaLink: `/${'a'.repeat(2048)}` }, 'ctaLink'],
        [{ content: 'ok', ctaLink: '/with space' }, 'ctaLink'],
        [{ content: 'ok', cta_link: 5 }, 'cta_link'],
      ];
      for (const [body, field] of cases) {
        const res = await a.api.put('/dashboard/v1/prompts', body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      const okMax = await a.api.put('/dashboard/v1/prompts', { content: 'x'.repeat(10_000), type: 'a'.repeat(64), ctaLink: `/${'a'.repeat(2047)}` });
      expect(okMax.status).toBe(201);
      expect(okMax.body.content).toHaveLength(10_000);
      expect((await a.api.put('/dashboard/v1/prompts', { content: 'x' })).status).toBe(201);
      // Nothing invalid was stored.
      expect((await a.api.get('/dashboard/v1/prompts')).body.content).toBe('x');
    });

    it('refuses malformed JSON (400), viewers (403) and anonymous callers (401)', async () => {
      const a = await createOrg(t);
      expect((await a.api.put('/dashboard/v1/prompts', '{"content":')).status).toBe(400);
      const viewer = await a.as('viewer');
      const forbidden = await viewer.put('/dashboard/v1/prompts', { content: 'x' });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.code).toBe('forbidden');
      expect((await viewer.request('DELETE', '/dashboard/v1/prompts')).status).toBe(403);
      expect((await client(t.app).put('/dashboard/v1/prompts', { content: 'x' })).status).toBe(401);
      expect((await a.api.get('/dashboard/v1/prompts')).body.id).toBe(0);
    });

    it('DELETE removes the organization prompt and the built-in applies again; 404 when none', async () => {
      const a = await createOrg(t);
      const b = await createOrg(t);
      const set = await a.api.put('/dashboard/v1/prompts', { type: 'sales', content: 'Sell' });
      // Another organization cannot delete it.
      expect((await b.api.request('DELETE', '/dashboard/v1/prompts?type=sales')).status).toBe(404);
      const del = await a.api.request('DELETE', '/dashboard/v1/prompts?type=sales');
      expect(del.status).toBe(200);
      expect(del.body).toEqual(set.body);
      expect((await a.api.get('/dashboard/v1/prompts?type=sales')).status).toBe(404);
      expect((await a.api.request('DELETE', '/dashboard/v1/prompts?type=sales')).status).toBe(404);
      await a.api.put('/dashboard/v1/prompts', { content: 'Mine' });
      expect((await a.api.request('DELETE', '/dashboard/v1/prompts')).status).toBe(200);
      expect((await a.api.get('/dashboard/v1/prompts')).body.id).toBe(0);
      // The built-in prompt itself cannot be deleted.
      expect((await a.api.request('DELETE', '/dashboard/v1/prompts')).status).toBe(404);
    });
  });

  describe('GET /v1/generate_script', () => {
    const gen = (api: OrgContext['api'], params: Record<string, string>) => api.get(`/dashboard/v1/generate_script?${q(params)}`);

    it('answers an outline from the built-in prompt, field by field', async () => {
      const res = await gen(org.api, { topic: 'onboarding new customers' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(SCRIPT_KEYS);
      expect(res.body).toMatchObject({
        prompt_id: 0,
        type: 'global',
        topic: 'onboarding new customers',
        video_type: 'video',
        length: 'medium',
        seconds: 180,
        title: 'Onboarding new customers',
      });
      expect(res.body.prompt).toContain('Write a medium (3 minutes) video script about onboarding new customers.');
      expect(res.body.prompt).not.toContain('{{');
      expect(res.body.sections.map((s: { title: string }) => s.title)).toEqual(['Hook', 'Introduction', 'Key points', 'Call to action']);
      for (const s of res.body.sections) {
        expect(Object.keys(s).sort()).toEqual(['content', 'seconds', 'title']);
        expect(s.content).toContain('onboarding new customers');
        expect(s.seconds).toBeGreaterThan(0);
      }
      expect(res.body.sections.reduce((n: number, s: { seconds: number }) => n + s.seconds, 0)).toBe(180);
      expect(res.body.script).toContain('Onboarding new customers');
      expect(res.body.script).toContain('1. Hook (0:00-');
      expect(res.body.script).toContain('4. Call to action (');
      expect(res.body.script).toContain('-3:00)');
    });

    it('is deterministic: the same input gives the same output', async () => {
      const params = { topic: 'Pricing  tiers ', video_type: 'product demo', length: 'long' };
      const first = await gen(org.api, params);
      const second = await gen(org.api, params);
      const viaViewer = await gen(await org.as('viewer'), params);
      expect(first.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(viaViewer.body).toEqual(first.body);
      expect(first.body.topic).toBe('Pricing tiers');
      expect(first.body.seconds).toBe(420);
      expect(first.body.sections.find((s: { title: string }) => s.title === 'Key points').content).toContain('5) ');
      const short = await gen(org.api, { ...params, length: 'short' });
      expect(short.body.seconds).toBe(60);
      expect(short.body).not.toEqual(first.body);
      expect(short.body.sections.find((s: { title: string }) => s.title === 'Key points').content).not.toContain('3) ');
    });

    it("is shaped by the organization's prompt of the type, and only that organization's", async () => {
      const a = await createOrg(t);
      const b = await createOrg(t);
      const prompt = await a.api.put('/dashboard/v1/prompts', {
        type: 'sales',
        content: 'Tone: playful, for {{video_type}} viewers.\nCover {{topic}} in this order:\n1. The problem\n2. Live demo\n3) Pricing\n- Next steps',
      });
      const res = await gen(a.api, { topic: 'the new editor', type: 'sales', video_type: 'webinar' });
      expect(res.status).toBe(200);
      expect(res.body.prompt_id).toBe(prompt.body.id);
      expect(res.body.type).toBe('sales');
      expect(res.body.sections.map((s: { title: string }) => s.title)).toEqual(['The problem', 'Live demo', 'Pricing', 'Next steps']);
      expect(res.body.prompt).toBe(
        'Tone: playful, for webinar viewers.\nCover the new editor in this order:\n1. The problem\n2. Live demo\n3) Pricing\n- Next steps',
      );
      expect(res.body.script).toContain('Direction: Tone: playful, for webinar viewers. Cover the new editor in this order:');
      expect(res.body.script).toContain('2. Live demo (');

      // Overriding global changes the default too.
      await a.api.put('/dashboard/v1/prompts', { content: 'Only one part:\n- Everything about {{topic}}' });
      const global = await gen(a.api, { topic: 'x' });
      expect(global.body.sections.map((s: { title: string }) => s.title)).toEqual(['Everything about x']);
      expect(global.body.prompt_id).toBeGreaterThan(0);

      // The other organization: no sales prompt, built-in global.
      expect((await gen(b.api, { topic: 'the new editor', type: 'sales' })).status).toBe(404);
      const builtIn = await gen(b.api, { topic: 'x' });
      expect(builtIn.body.prompt_id).toBe(0);
      expect(builtIn.body.sections).toHaveLength(4);
    });

    it('accepts an ad-hoc prompt (prompt_id null) and leaves unknown placeholders as they are', async () => {
      const res = await gen(org.api, { topic: 'cats', prompt: 'About {{ topic }} ({{length}}, {{unknown}})\n* Intro\n* Outro' });
      expect(res.status).toBe(200);
      expect(res.body.prompt_id).toBeNull();
      expect(res.body.prompt).toBe('About cats (medium, {{unknown}})\n* Intro\n* Outro');
      expect(res.body.sections.map((s: { title: string }) => s.title)).toEqual(['Intro', 'Outro']);
      const blank = await gen(org.api, { topic: 'cats', prompt: '   ' });
      expect(blank.status).toBe(422);
      expect(blank.body.details[0].field).toBe('prompt');
    });

    it('requires topic and validates each parameter on both sides of its bounds', async () => {
      const missing = await org.api.get('/dashboard/v1/generate_script');
      expect(missing.status).toBe(422);
      expect(missing.body.code).toBe('validation_failed');
      expect(missing.body.details).toEqual([{ field: 'topic', message: 'is required' }]);
      expect(missing.body.error).toContain('topic');
      for (const params of [{ topic: '' }, { topic: '   ' }, { topic: 'x'.repeat(501) }]) {
        const res = await gen(org.api, params);
        expect(res.status).toBe(422);
        expect(res.body.details[0].field).toBe('topic');
      }
      expect((await gen(org.api, { topic: 'x'.repeat(500) })).status).toBe(200);
      expect((await gen(org.api, { topic: 'x' })).status).toBe(200);
      const cases: Array<[Record<string, string>, string]> = [
        [{ topic: 'x', length: 'huge' }, 'length'],
        [{ topic: 'x', video_type: '' }, 'video_type'],
        [{ topic: 'x', video_type: ' ' }, 'video_type'],
        [{ topic: 'x', video_type: 'v'.repeat(101) }, 'video_type'],
        [{ topic: 'x', type: '' }, 'type'],
        [{ topic: 'x', prompt: 'p'.repeat(4001) }, 'prompt'],
      ];
      for (const [params, field] of cases) {
        const res = await gen(org.api, params);
        expect(res.status, JSON.stringify(params).slice(0, 60)).toBe(422);
        expect(res.body.details[0].field).toBe(field);
      }
      expect((await gen(org.api, { topic: 'x', video_type: 'v'.repeat(100), prompt: 'p'.repeat(4000) })).status).toBe(200);
      expect((await gen(org.api, { topic: 'x', type: 'unknown' })).status).toBe(404);
      expect((await client(t.app).get('/dashboard/v1/generate_script?topic=x')).status).toBe(401);
    });
  });

  it('documents the operations in the OpenAPI document', async () => {
    const doc = await client(t.app).get('/dashboard/openapi.json');
    expect(doc.body.paths['/dashboard/v1/prompts']).toHaveProperty('get');
    expect(doc.body.paths['/dashboard/v1/prompts']).toHaveProperty('put');
    expect(doc.body.paths['/dashboard/v1/generate_script'].get.tags).toEqual(['prompts']);
  });
});
