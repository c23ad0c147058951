import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

describe.each(dialects)('foundation on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  it('answers the service root with playback and embed domains', async () => {
    const res = await org.api.get('/dashboard/v1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ playback_domain: 'reelbase.test', embed_domain: 'reelbase.test' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('accepts the token as query parameter, body attribute and Bearer header', async () => {
    const anon = client(t.app);
    expect((await anon.get(`/dashboard/v1?auth_token=${org.token}`)).status).toBe(200);
    expect((await org.api.get('/dashboard/v1')).status).toBe(200);
    expect((await anon.get('/dashboard/v1')).status).toBe(401);
    expect((await anon.get('/dashboard/v1?auth_token=nope')).status).toBe(401);
    const bad = await anon.get('/dashboard/v1', { authorization: 'Bearer nope' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ code: 'unauthorized', details: [] });
    expect(typeof bad.body.error).toBe('string');
  });

  it('answers the .json suffix like the bare path', async () => {
    const res = await org.api.get('/dashboard/v1.json');
    expect(res.status).toBe(200);
    expect(res.body.playback_domain).toBe('reelbase.test');
  });

  it('distinguishes an unknown route from a missing record', async () => {
    const res = await org.api.get('/dashboard/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('route_not_found');
  });

  it('refuses an Accept it cannot produce with 406, and CSV on a non-list operation', async () => {
    expect((await org.api.get('/dashboard/v1', { accept: 'text/html' })).status).toBe(406);
    expect((await org.api.get('/dashboard/v1', { accept: 'text/csv' })).status).toBe(406);
    expect((await org.api.get('/dashboard/v1', { accept: '*/*' })).status).toBe(200);
    expect((await org.api.get('/dashboard/v1', { accept: 'text/html, application/json;q=0.5' })).status).toBe(200);
  });

  it('serves the OpenAPI 3.1 document and the docs page without a token', async () => {
    const anon = client(t.app);
    const doc = await anon.get('/dashboard/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toContain('/dashboard/v1');
    const docs = await t.app.inject({ method: 'GET', url: '/dashboard/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger');
  });
});
