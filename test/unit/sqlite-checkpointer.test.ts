import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The write-ahead log copied into the database by a thread of its own (src/db/sqlite-checkpointer.ts).
 * Only a checkpoint writes pages into the database file, so the file's size says whether one ran.
 */
describe('SQLite checkpoints off the event loop', () => {
  let dir: string;
  let database: Database | null = null;
  afterEach(async () => {
    await database?.destroy();
    database = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function writeAndWatch(backgroundCheckpoints: false | { fromPages: number }) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-checkpoint-'));
    const file = path.join(dir, 'reelbase.sqlite');
    database = openDatabase({ sqlitePath: file, backgroundCheckpoints });
    const { db } = database;
    await sql`create table filler (id integer primary key, body text not null)`.execute(db);
    const before = fs.statSync(file).size;
    // ~2 MB in 50 commits: about 500 pages of the log, under the 1,000 at which SQLite's own
    // automatic checkpoint would run (without the thread; with it, that bound is 16,000).
    for (let i = 0; i < 50; i++) await sql`insert into filler (body) select hex(randomblob(20000))`.execute(db);
    const wal = fs.statSync(`${file}-wal`).size;
    let grown = 0;
    for (let waited = 0; waited < 1_500 && grown < 1_000_000; waited += 50) {
      await sleep(50);
      grown = fs.statSync(file).size - before;
    }
    const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(db);
    return { wal, grown, rows: Number(rows.rows[0].n) };
  }

  it('copies the log into the file while the server only writes, and reads still see every row', async () => {
    // From 100 pages rather than the server's 4,000, so that a test's few megabytes are enough.
    const { wal, grown, rows } = await writeAndWatch({ fromPages: 100 });
    expect(wal).toBeGreaterThan(1_000_000);
    expect(grown).toBeGreaterThan(1_000_000);
    expect(rows).toBe(50);
  });

  it('without it, the same writes stay in the log (what makes the first test mean something)', async () => {
    const { wal, grown, rows } = await writeAndWatch(false);
    expect(wal).toBeGreaterThan(1_000_000);
    expect(grown).toBe(0);
    expect(rows).toBe(50);
  });
});
