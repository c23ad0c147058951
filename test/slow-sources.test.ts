import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const P = '/dashboard/v1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for: ${what}`);
}

interface Connection {
  openedAt: number;
  closedAt?: number;
}

/**
 * Sources that never finish, on 127.0.0.1: GET /drip/<name> answers a 10 MB body at 1 byte a second,
 * GET /stall/<name> sends its headers and then nothing. Each request's connection is recorded (by path):
 * when it opened and when the client closed it.
 */
async function startSlowOrigin() {
  const connections = new Map<string, Connection>();
  const server = http.createServer((req, res) => {
    const conn: Connection = { openedAt: Date.now() };
    connections.set(req.url ?? '/', conn);
    let timer: NodeJS.Timeout | undefined;
    res.on('close', () => {
      conn.closedAt = Date.now();
      clearInterval(timer);
    });
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 10_000_000 });
    if (req.url?.startsWith('/drip/')) {
      res.write('x');
      timer = setInterval(() => res.write('x'), 1000);
    } else {
      res.flushHeaders();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    connection: (p: string) => connections.get(p),
    isOpen: (p: string) => connections.get(p) !== undefined && connections.get(p)!.closedAt === undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let origin: Awaited<ReturnType<typeof startSlowOrigin>>;
beforeAll(async () => {
  origin = await startSlowOrigin();
});
afterAll(() => origin?.close());

describe.each(dialects)('slow upload_urls on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let dataDir: string;
  const runners: JobRunner[] = [];

  /** A worker as server.ts makes one: jobHandlers() of the container, WORKER_CONCURRENCY media slots. */
  const startWorker = (config: Config = t.config, options: { backoff?: () => number } = {}) => {
    const runner = new JobRunner(t.database.db, {
      handlers: jobHandlers(createContainer({ config, database: t.database })),
      concurrency: config.workerConcurrency,
      pollMs: 20,
      ...options,
    });
    runners.push(runner);
    runner.start();
    return runner;
  };
  const createVideo = async (upload_url: string) => {
    const res = await org.api.post(`${P}/videos`, { video: { name: 'Slow', upload_url } });
    expect(res.status, res.raw).toBe(201);
    return res.body.id as number;
  };
  const jobsOf = async (type: string, match: (payload: any) => boolean) =>
    (await t.database.db.selectFrom('jobs').selectAll().where('type', '=', type).execute()).filter((j) => match(JSON.parse(j.payload)));
  const runningJobs = async () => t.database.db.selectFrom('jobs').select(['id', 'type']).where('status', '=', 'running').execute();

  beforeAll(async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-slow-${dialect}-`));
    t = await createTestApp(dialect, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${origin.port}`, DATA_DIR: dataDir, WORKER_CONCURRENCY: '2' });
    org = await createOrg(t);
  });
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop(100)));
    await t?.close();
    await fsp.rm(dataDir, { recursive: true, force: true });
  });

  it('deleting a video aborts its running download (and its file set download) within seconds', async () => {
    const id = await createVideo(`${origin.base}/drip/${dialect}-delete`);
    const set = await org.api.post(`${P}/videos/${id}/files`, { custom_identifier: 'alt', sd_url: `${origin.base}/drip/${dialect}-delete-sd` });
    expect(set.status, set.raw).toBe(202);
    const runner = startWorker();
    await waitFor('both downloads connected', () => origin.isOpen(`/drip/${dialect}-delete`) && origin.isOpen(`/drip/${dialect}-delete-sd`));
    expect((await jobsOf('video.process', (p) => p.videoId === id)).map((j) => j.status)).toEqual(['running']);

    const deletedAt = Date.now();
    expect((await org.api.delete(`${P}/videos/${id}`)).status).toBe(200);
    await waitFor('the source connection closed', () => !origin.isOpen(`/drip/${dialect}-delete`), 5000);
    await waitFor('the file set connection closed', () => !origin.isOpen(`/drip/${dialect}-delete-sd`), 5000);
    expect(origin.connection(`/drip/${dialect}-delete`)!.closedAt! - deletedAt).toBeLessThan(3000);
    expect(origin.connection(`/drip/${dialect}-delete-sd`)!.closedAt! - deletedAt).toBeLessThan(3000);

    // The processing job went with the video; both slots are free again and the work folders gone.
    expect(await jobsOf('video.process', (p) => p.videoId === id)).toEqual([]);
    await waitFor('no job running', async () => (await runningJobs()).length === 0, 5000);
    await waitFor('work folders removed', () => fs.readdirSync(path.join(t.config.mediaDir, '.work')).length === 0, 5000);
    await runner.stop(100);
  });

  it('a full media lane (two sources at 1 byte a second) does not hold up a GDPR request', async () => {
    const runner = startWorker();
    const ids = [await createVideo(`${origin.base}/drip/${dialect}-a`), await createVideo(`${origin.base}/drip/${dialect}-b`)];
    await waitFor('both media slots busy', () => origin.isOpen(`/drip/${dialect}-a`) && origin.isOpen(`/drip/${dialect}-b`));
    // A third source waits for a media slot: the media lane keeps its limit.
    const third = await createVideo(`${origin.base}/drip/${dialect}-c`);

    const filed = await org.api.post(`${P}/gdpr_requests`, { request_action: 'access', email: 'nobody.here@example.com' });
    expect(filed.status, filed.raw).toBe(202);
    const startedAt = Date.now();
    await waitFor(
      'the GDPR request completed',
      async () => (await org.api.get(`${P}/gdpr_requests/${filed.body.receipt_id}`)).body.status === 'completed',
      5000,
    );
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(origin.isOpen(`/drip/${dialect}-a`) && origin.isOpen(`/drip/${dialect}-b`)).toBe(true);
    expect((await jobsOf('video.process', (p) => p.videoId === third)).map((j) => j.status)).toEqual(['queued']);
    expect(origin.connection(`/drip/${dialect}-c`)).toBeUndefined();

    // Deleting the slow videos frees the slots for the third, which is deleted too.
    for (const id of ids) expect((await org.api.delete(`${P}/videos/${id}`)).status).toBe(200);
    await waitFor('the third source connected', () => origin.isOpen(`/drip/${dialect}-c`));
    expect((await org.api.delete(`${P}/videos/${third}`)).status).toBe(200);
    await waitFor('the third source closed', () => !origin.isOpen(`/drip/${dialect}-c`), 5000);
    await runner.stop(100);
  });

  it('a source that stops sending fails its attempt after UPLOAD_IDLE_TIMEOUT_SECONDS and is retried', async () => {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      PUBLIC_URL: t.config.publicUrl,
      UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${origin.port}`,
      UPLOAD_IDLE_TIMEOUT_SECONDS: '1',
    });
    config.signingSecret = t.config.signingSecret;
    const id = await createVideo(`${origin.base}/stall/${dialect}`);
    const runner = startWorker(config, { backoff: () => 60_000 });
    await waitFor('the stalled source connected', () => origin.isOpen(`/stall/${dialect}`));
    const connectedAt = origin.connection(`/stall/${dialect}`)!.openedAt;
    await waitFor('the attempt failed', async () => (await jobsOf('video.process', (p) => p.videoId === id))[0].status === 'queued', 5000);
    const [job] = await jobsOf('video.process', (p) => p.videoId === id);
    // Transient: queued again for the queue's backoff, the video still processing.
    expect([job.status, job.attempts]).toEqual(['queued', 1]);
    expect(job.last_error).toBe(`127.0.0.1:${origin.port} sent no data for 1 s`);
    expect(origin.isOpen(`/stall/${dialect}`)).toBe(false);
    expect(origin.connection(`/stall/${dialect}`)!.closedAt! - connectedAt).toBeLessThan(3000);
    expect((await org.api.get(`${P}/videos/${id}`)).body.status).toBe('processing');
    await runner.stop(100);
    expect((await org.api.delete(`${P}/videos/${id}`)).status).toBe(200);
  });
});
