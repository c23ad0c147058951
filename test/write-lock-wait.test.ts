import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, DialectName } from '../src/db/database.ts';
import { SQLITE_BUSY_GIVE_UP_MS } from '../src/db/sqlite-busy.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const HOLD_MS = 600;

/**
 * An app on `dialect` (SQLite: in a file), an organization, and a second connection to its database,
 * as another process would have; set up before the block's tests and closed after them.
 */
function appWithAnotherConnection(dialect: DialectName) {
  const ctx = {} as { t: TestApp; other: Database; org: OrgContext };
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-lock-'));
    ctx.t = await createTestApp(dialect, {}, { sqlitePath: path.join(dir, 'reelbase.sqlite') });
    ctx.other = ctx.t.openAnother();
    ctx.org = await createOrg(ctx.t);
  });
  afterAll(async () => {
    await ctx.other.destroy();
    await ctx.t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return ctx;
}

/**
 * A write that finds the database's write lock held by another connection (another process, the
 * rollups' thread) waits for it without holding the event loop (src/db/sqlite-busy.ts): meanwhile
 * the server goes on answering what needs no database write, and the write is made once the lock
 * is free. SQLite's own busy timeout slept on the event loop for the whole wait.
 */
describe.each(dialects)('a write waiting for the write lock on %s', (dialect) => {
  const ctx = appWithAnotherConnection(dialect);

  /** Holds the write lock of the CTAs' and players' tables (SQLite: of the file) from another connection for HOLD_MS; resolves once it holds it. */
  async function holdWriteLock(): Promise<{ released: Promise<number> }> {
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const released = ctx.other.db.transaction().execute(async (trx) => {
      // SQLite: the transaction began with BEGIN IMMEDIATE, which took the file's write lock.
      if (dialect === 'postgres') await sql`lock table events, players in exclusive mode`.execute(trx);
      held();
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      return performance.now();
    });
    await holding;
    return { released };
  }

  it('answers other requests meanwhile, with the event loop free, and makes the write once the lock is free', { timeout: 30_000 }, async () => {
    const player = await createPlayer(ctx.org.api);
    const chapterId = player.chapters_attributes[0].id as number;
    // Read once, so that the next reads are answered from memory.
    expect((await ctx.org.api.get(`${P}/players/${player.id}`)).status).toBe(200);

    const { released } = await holdWriteLock();
    let last = performance.now();
    let longestGap = 0;
    const ticks = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    try {
      const created = ctx.org.api.post(`${P}/ctas`, { chapter_id: chapterId, second: 1, duration: 5, width: 200, html: '<b>waited</b>' }).then((res) => ({
        res,
        at: performance.now(),
      }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const read = await ctx.org.api.get(`${P}/players/${player.id}`);
      const readAt = performance.now();
      const { res, at } = await created;
      const releasedAt = await released;

      expect(read.status).toBe(200);
      // The read was answered while the write waited for the lock.
      expect(readAt).toBeLessThan(releasedAt);
      expect(res.status).toBe(201);
      expect(at).toBeGreaterThanOrEqual(releasedAt);
      // SQLite's busy timeout held the event loop until it gave up (5 s: the holder, on this loop, could not let go).
      expect(longestGap).toBeLessThan(1_000);
      const listed = await ctx.org.api.get(`${P}/chapters/${chapterId}/ctas`);
      expect(listed.body.ctas.map((c: { html: string }) => c.html)).toEqual(['<b>waited</b>']);
    } finally {
      clearInterval(ticks);
    }
  });

  it('a transaction that finds the lock held begins once it is free, and commits everything', { timeout: 30_000 }, async () => {
    const { released } = await holdWriteLock();
    // Creating a player is one transaction (the player, its chapter and its video).
    const created = await ctx.org.api.post(`${P}/players`, {
      player: {
        name: 'After the lock',
        chapters_attributes: [{ position: 0, video_attributes: { name: 'v', upload_url: 'https://media.example.com/v.mp4' } }],
      },
    });
    const createdAt = performance.now();
    expect(created.status).toBe(201);
    // Its BEGIN waited for the lock.
    expect(createdAt).toBeGreaterThanOrEqual(await released);
    const got = await ctx.org.api.get(`${P}/players/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.chapters_attributes).toHaveLength(1);
  });
});

/** SQLite: a write that waited as long as it may for a lock still held is answered 503, with Retry-After, and made nothing. */
describe('a write lock held past the wait on sqlite', () => {
  const ctx = appWithAnotherConnection('sqlite');

  it('answers 503 database_busy with Retry-After once the wait is over, and creates nothing', { timeout: 30_000 }, async () => {
    const player = await createPlayer(ctx.org.api);
    const chapterId = player.chapters_attributes[0].id as number;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const released = ctx.other.db.transaction().execute(async () => {
      held();
      await new Promise((resolve) => setTimeout(resolve, SQLITE_BUSY_GIVE_UP_MS + 1_000));
    });
    await holding;
    const res = await ctx.org.api.post(`${P}/ctas`, { chapter_id: chapterId, second: 1, duration: 5, width: 200, html: '<b>never</b>' });
    await released;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('database_busy');
    expect(res.headers['retry-after']).toBe('1');
    expect((await ctx.org.api.get(`${P}/chapters/${chapterId}/ctas`)).body.ctas).toEqual([]);
  });
});
