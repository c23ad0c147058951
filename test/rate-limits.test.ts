import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createContainer } from '../src/container.ts';
import type { Database } from '../src/db/database.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const LIMITS = { REPORTS_PER_10_MINUTES: '5', ACCESS_CODE_ATTEMPTS_PER_10_MINUTES: '3' };

const report = { type: 'view', chapter: 0, visitor_uuid: 'v-1', player_load_id: 'load-1', percent_watched: 25 };

describe.each(dialects)('public limits hold under key floods and are shared by every process (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let dir: string;
  let other: Database;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-limits-'));
    t = await createTestApp(dialect, LIMITS, dialect === 'sqlite' ? { sqlitePath: path.join(dir, 'db.sqlite') } : {});
    org = await createOrg(t);
    other = t.openAnother();
  });
  afterAll(async () => {
    await other.destroy();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Another API process on the same database (as a second node of a deployment would be). */
  const secondNode = () => buildApp({ config: t.config, database: other, container: createContainer({ config: t.config, database: other }) });

  const post = (app: TestApp['app'], url: string, payload: unknown, ip = '203.0.113.50') =>
    app.inject({ method: 'POST', url, payload: payload as object, remoteAddress: ip });

  it("viewers' reports: a flood to unknown players counts nothing and resets nothing; the limit holds on another node", async () => {
    const player = await createPlayer(org.api);
    for (let i = 0; i < 5; i++) expect((await post(t.app, `/watch/${player.uuid}/analytics`, report)).statusCode).toBe(204);
    // 3,000 reports about players that do not exist: 404 each, none counted (the old counter forgot every key at 10,000).
    for (let i = 0; i < 3000; i++) {
      const res = await post(t.app, `/watch/${randomUUID()}/analytics`, report);
      if (res.statusCode !== 404) throw new Error(`report ${i} to an unknown player answered ${res.statusCode}`);
    }
    const limited = await post(t.app, `/watch/${player.uuid}/analytics`, report);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-limit']).toBe('5');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(JSON.parse(limited.body).code).toBe('rate_limited');
    // Another address is not limited by this one.
    expect((await post(t.app, `/watch/${player.uuid}/analytics`, report, '203.0.113.51')).statusCode).toBe(204);
    const node = await secondNode();
    try {
      expect((await post(node, `/watch/${player.uuid}/analytics`, report)).statusCode).toBe(429);
    } finally {
      await node.close();
    }
  });

  it('reports arriving together are counted together (one statement) and exactly: the limit admits 5 of 12 at once, each with its own remaining count', async () => {
    const player = await createPlayer(org.api);
    const ip = '203.0.113.77';
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(t.app, `/watch/${player.uuid}/analytics`, report, ip)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([...Array(5).fill(204), ...Array(7).fill(429)]);
    // The refused ones say so; the limit was counted once per report, not once per batch.
    for (const a of answers.filter((x) => x.statusCode === 429)) expect(a.headers['ratelimit-remaining']).toBe('0');
    // Two addresses in one batch: counted apart.
    const mixed = await Promise.all(
      ['203.0.113.78', '203.0.113.79', '203.0.113.78'].map((address) => post(t.app, `/watch/${player.uuid}/analytics`, report, address)),
    );
    expect(mixed.map((a) => a.statusCode)).toEqual([204, 204, 204]);
    // .78 counted 2 in that batch: 3 more, then refused.
    for (let i = 0; i < 3; i++) expect((await post(t.app, `/watch/${player.uuid}/analytics`, report, '203.0.113.78')).statusCode).toBe(204);
    expect((await post(t.app, `/watch/${player.uuid}/analytics`, report, '203.0.113.78')).statusCode).toBe(429);
  });

  it('access codes: wrong codes are counted per address and player, a flood elsewhere resets nothing, another node refuses too', async () => {
    const player = await createPlayer(org.api, { access_code: 'sesame' });
    const code = (app: TestApp['app'], access_code: string, uuid = player.uuid) =>
      app.inject({
        method: 'POST',
        url: `/watch/${uuid}`,
        remoteAddress: '203.0.113.60',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `access_code=${access_code}`,
      });
    for (let i = 0; i < 3; i++) expect((await code(t.app, 'wrong')).statusCode).toBe(403);
    for (let i = 0; i < 500; i++) expect((await code(t.app, 'wrong', randomUUID())).statusCode).toBe(404);
    const blocked = await code(t.app, 'sesame');
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    const node = await secondNode();
    try {
      expect((await code(node, 'sesame')).statusCode).toBe(429);
    } finally {
      await node.close();
    }
  });
});

describe('with REDIS_URL the limits count in Redis', () => {
  let t: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await redis.ping(); // Redis runs on the machine (and in CI): a test that cannot reach it fails rather than skips.
    t = await createTestApp('sqlite', { ...LIMITS, REDIS_URL });
  });
  afterAll(async () => {
    await t.close();
    await redis.quit();
  });

  it('counts there, not in the database, and refuses past the limit', async () => {
    const org = await createOrg(t);
    const player = await createPlayer(org.api);
    const ip = `203.0.113.${Math.floor(Math.random() * 200) + 20}`;
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'POST', url: `/watch/${player.uuid}/analytics`, payload: report, remoteAddress: ip });
      expect(res.statusCode).toBe(204);
    }
    const res = await t.app.inject({ method: 'POST', url: `/watch/${player.uuid}/analytics`, payload: report, remoteAddress: ip });
    expect(res.statusCode).toBe(429);
    expect(await t.database.db.selectFrom('rate_limits').selectAll().execute()).toEqual([]);
    const keys = await redis.keys(`reelbase:limit:*report:${ip}:${player.uuid}`);
    expect(keys).toHaveLength(1);
    expect(Number(await redis.get(keys[0]))).toBe(6);
  });
});

describe('with REDIS_URL unreachable', () => {
  it("answers viewers' reports (unlimited) rather than failing", { timeout: 30_000 }, async () => {
    const t = await createTestApp('sqlite', { ...LIMITS, REDIS_URL: 'redis://127.0.0.1:1/0' });
    try {
      const org = await createOrg(t);
      const player = await createPlayer(org.api);
      for (let i = 0; i < 7; i++) {
        const res = await t.app.inject({ method: 'POST', url: `/watch/${player.uuid}/analytics`, payload: report, remoteAddress: '203.0.113.9' });
        expect(res.statusCode).toBe(204);
      }
    } finally {
      await t.close();
    }
  });
});
