/**
 * The tus lock shared by API processes (src/modules/uploads/upload-locker.ts), on each database: two
 * lockers over two connections stand for two nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { DatabaseLocker } from '../src/modules/uploads/upload-locker.ts';
import { UploadsRepository } from '../src/modules/uploads/uploads.repository.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import os from 'node:os';
import path from 'node:path';
import fsp from 'node:fs/promises';

const options = { leaseMs: 600, pollMs: 50, timeoutMs: 3000 };

describe.each(dialects)('the shared upload lock on %s', (dialect) => {
  let t: TestApp;
  let other: Database;
  let dir: string;
  let nodeA: DatabaseLocker;
  let nodeB: DatabaseLocker;

  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-locks-'));
    t = await createTestApp(dialect, {}, { sqlitePath: path.join(dir, 'db.sqlite') });
    other = t.openAnother();
    nodeA = new DatabaseLocker(new UploadsRepository(t.database.db), options);
    nodeB = new DatabaseLocker(new UploadsRepository(other.db), options);
  });
  afterAll(async () => {
    await other?.destroy();
    await t?.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('lets one request of one node hold an upload; another node asks it to release, then takes it', async () => {
    const held = nodeA.newLock('u1');
    let released = 0;
    await held.lock(new AbortController().signal, async () => {
      released++;
      await held.unlock(); // what tus does: the holder's request ends and unlocks
    });
    const started = Date.now();
    await nodeB.newLock('u1').lock(new AbortController().signal, () => {});
    expect(released).toBe(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('takes over the lock of a holder that stopped renewing (a killed process) after its lease', async () => {
    const crashed = nodeA.newLock('u2');
    await crashed.lock(new AbortController().signal, () => {
      /* a dead process answers nothing */
    });
    // The process dies: its heartbeat stops, it never unlocks.
    clearInterval((crashed as unknown as { heartbeat: NodeJS.Timeout }).heartbeat);
    const started = Date.now();
    await nodeB.newLock('u2').lock(new AbortController().signal, () => {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(options.leaseMs - 100);
    expect(Date.now() - started).toBeLessThan(options.leaseMs + 1000);
  });

  it('gives up with the lock timeout while a live holder keeps it, and lets a different upload go at once', async () => {
    const stubborn = nodeA.newLock('u3');
    await stubborn.lock(new AbortController().signal, () => {});
    const signal = AbortSignal.timeout(300);
    await expect(nodeB.newLock('u3').lock(signal, () => {})).rejects.toMatchObject({ status_code: 500 });
    await nodeB.newLock('u4').lock(new AbortController().signal, () => {});
    await stubborn.unlock();
    await nodeB.newLock('u3').lock(new AbortController().signal, () => {});
  });
});
