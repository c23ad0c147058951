import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepWorkDirs } from '../../src/jobs/work-dir.ts';

describe('sweepWorkDirs', () => {
  it('removes the scratch folders of jobs no worker runs, and keeps those of running jobs and anything else', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-work-'));
    for (const name of ['job-1-1', 'job-1-2', 'job-2-1', 'job-3-4', 'other']) await fsp.mkdir(path.join(root, name));
    let asked: number[] = [];
    const removed = await sweepWorkDirs(root, async (ids) => {
      asked = ids;
      return new Set([2]);
    });
    expect(asked.sort()).toEqual([1, 2, 3]);
    expect(removed).toBe(3);
    expect(fs.readdirSync(root).sort()).toEqual(['job-2-1', 'other']);
    await fsp.rm(root, { recursive: true, force: true });
    expect(await sweepWorkDirs(root, async () => new Set())).toBe(0); // no folder at all
  });
});
