import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { settle } from './helpers/media.ts';

const P = '/dashboard/v1';

/**
 * upload_url destinations that only plain global unicast may be: IPv6 transition forms (Teredo, NAT64's
 * local-use prefix, 6to4, IPv4-mapped) and benchmarking ranges are refused before any connection, as a
 * permanent failure (one attempt), whatever public address they might carry or reach.
 */
describe.each(dialects)('upload_url to special-purpose addresses on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t?.close());

  const cases: Array<[string, RegExp]> = [
    ['http://[2001:0::1]/x.mp4', /The host 2001::1 resolves to an IPv6 transition address/], // Teredo 2001::/32
    ['http://[64:ff9b:1::a00:1]/', /The host 64:ff9b:1::a00:1 resolves to an IPv6 transition address/], // NAT64 local-use
    ['http://[2001:2::1]/', /The host 2001:2::1 resolves to a reserved or special-purpose address/], // benchmarking
    ['http://[2002:808:808::1]/x.mp4', /IPv6 transition address/], // 6to4 around 8.8.8.8
    ['http://[::ffff:8.8.8.8]/x.mp4', /IPv6 transition address/], // IPv4-mapped public address
    ['http://198.18.0.1/x.mp4', /reserved or special-purpose address/], // benchmarking
  ];

  it('ends each video in status error with a "refused" message after one attempt', async () => {
    const ids: number[] = [];
    for (const [url] of cases) {
      const res = await org.api.post(`${P}/videos`, { video: { name: 'Refused', upload_url: url } });
      expect(res.status, res.raw).toBe(201);
      ids.push(res.body.id as number);
    }
    const runner = new JobRunner(t.database.db, {
      handlers: jobHandlers(createContainer({ config: t.config, database: t.database })),
      backoff: () => 10,
      pollMs: 10,
    });
    await settle(runner, t.database.db);

    const jobs = await t.database.db.selectFrom('jobs').selectAll().where('type', '=', 'video.process').execute();
    for (const [i, [url, reason]] of cases.entries()) {
      const video = (await org.api.get(`${P}/videos/${ids[i]}`)).body;
      expect(video.status, url).toBe('error');
      expect(video.error_message, url).toMatch(/^The upload_url was refused: /);
      expect(video.error_message, url).toMatch(reason);
      const job = jobs.find((j) => (JSON.parse(j.payload) as { videoId: number }).videoId === ids[i])!;
      expect([job.status, job.attempts], url).toEqual(['failed', 1]);
    }
  });
});
