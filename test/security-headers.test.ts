import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const VTT = 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nalert(document.domain)//\n';

describe.each(dialects)('every answer carries nosniff (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  const nosniff = (res: { headers: Record<string, unknown> }) => expect(res.headers['x-content-type-options']).toBe('nosniff');

  it('on API answers and on every kind of error', async () => {
    nosniff(await org.api.get('/dashboard/v1/players'));
    nosniff(await org.api.get('/dashboard/v1/players/999999'));
    nosniff(await org.api.get('/dashboard/v1/no-such-route'));
    nosniff(await org.api.post('/dashboard/v1/players', '{"broken'));
    nosniff(await org.api.post('/dashboard/v1/players', 'a=b', { 'content-type': 'text/plain' }));
    nosniff(await client(t.app).get('/dashboard/v1/players'));
    nosniff(await client(t.app).get('/dashboard/openapi.json'));
  });

  it('on caption files, so that a caption cannot run as a script inside a CTA', async () => {
    const player = await createPlayer(org.api);
    const videoId = player.chapters_attributes[0].video_id;
    const created = await org.api.post(`/dashboard/v1/videos/${videoId}/captions`, { caption: { language: 'en', content: VTT } });
    expect(created.status).toBe(201);
    for (const key of ['vtt_url', 'txt_url', 'srt_url']) {
      const url = new URL(created.body[key]);
      const res = await client(t.app).get(url.pathname + url.search);
      expect(res.status).toBe(200);
      nosniff(res);
    }
    const vtt = new URL(created.body.vtt_url);
    expect((await client(t.app).get(vtt.pathname + vtt.search)).headers['content-type']).toMatch(/^text\/vtt/);
  });
});
