/**
 * Allowed embed domains with ports (docs/watch.md): `staging.example.com:8443` (or the origin
 * `https://staging.example.com:8443`) allows that port only; an entry without a port allows the
 * default ports, as the page's CSP frame-ancestors does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

describe.each(dialects)('embed domains with ports (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  const embed = (uuid: string, referer: string) => t.app.inject({ url: `/embed/${uuid}`, headers: { referer } });

  it('allows the named port, and only the default ports for an entry without one', async () => {
    const player = await createPlayer(org.api, { whitelisted_embed_domains: ['staging.example.com:8443', 'https://partner.example.org/', 'example.net'] });
    const allowed = await embed(player.uuid, 'https://staging.example.com:8443/preview');
    expect(allowed.statusCode).toBe(200);
    const csp = String(allowed.headers['content-security-policy']);
    expect(csp).toContain('https://staging.example.com:8443');
    expect(csp).toContain('https://*.staging.example.com:8443');
    expect(csp).toContain('https://partner.example.org ');
    expect((await embed(player.uuid, 'https://qa.staging.example.com:8443/')).statusCode).toBe(200);
    expect((await embed(player.uuid, 'https://staging.example.com/preview')).statusCode).toBe(403);
    expect((await embed(player.uuid, 'https://staging.example.com:9443/preview')).statusCode).toBe(403);
    expect((await embed(player.uuid, 'https://partner.example.org/x')).statusCode).toBe(200);
    expect((await embed(player.uuid, 'https://partner.example.org:8080/x')).statusCode).toBe(403);
    expect((await embed(player.uuid, 'http://www.example.net/x')).statusCode).toBe(200);
    expect((await embed(player.uuid, 'http://www.example.net:3000/x')).statusCode).toBe(403);
  });
});
