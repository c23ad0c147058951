import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/lib/group-commit.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A group commit whose batches the test sees; each item answers itself doubled. */
function recorded(windowMs: number, maxBatch = 500) {
  const batches: number[][] = [];
  const commit = new GroupCommit<number, number>(
    async (items) => {
      batches.push(items);
      return items.map((i) => i * 2);
    },
    maxBatch,
    windowMs,
  );
  return { commit, batches };
}

describe('GroupCommit', () => {
  it('writes the items of one turn together, and answers each its own outcome', async () => {
    const { commit, batches } = recorded(0);
    expect(await Promise.all([commit.add(1), commit.add(2), commit.add(3)])).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('with a window, waits that long for items of later turns while batches are small', async () => {
    const { commit, batches } = recorded(20);
    const answers = [commit.add(1)];
    await new Promise((resolve) => setImmediate(resolve));
    answers.push(commit.add(2));
    await sleep(5);
    answers.push(commit.add(3));
    expect(await Promise.all(answers)).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
    // Without a window, each turn's item would have been a batch of its own.
    const plain = recorded(0);
    const more = [plain.commit.add(1)];
    await new Promise((resolve) => setImmediate(resolve));
    more.push(plain.commit.add(2));
    await Promise.all(more);
    expect(plain.batches).toEqual([[1], [2]]);
  });

  it('after a large batch, writes at the next turn without waiting for the window', async () => {
    const { commit, batches } = recorded(1_000);
    const started = performance.now();
    // Sixteen items at once fill the first batch at the window's end.
    await Promise.all(Array.from({ length: 16 }, (_, i) => commit.add(i)));
    expect(batches).toHaveLength(1);
    const second = performance.now();
    await commit.add(99);
    expect(performance.now() - second).toBeLessThan(500);
    expect(second - started).toBeGreaterThanOrEqual(990);
    expect(batches.at(-1)).toEqual([99]);
    // That batch of one was small: the next waits for the window again.
    const third = performance.now();
    await commit.add(100);
    expect(performance.now() - third).toBeGreaterThanOrEqual(990);
  });

  it('a batch written full cancels the window its first item set: the next item waits for a window of its own', async () => {
    const { commit, batches } = recorded(200, 3);
    const first = [commit.add(1), commit.add(2)];
    await Promise.all([...first, commit.add(3)]);
    expect(batches).toEqual([[1, 2, 3]]);
    await sleep(150);
    const added = performance.now();
    await commit.add(4);
    // Not at the first window's end (50 ms from here): a window of its own.
    expect(performance.now() - added).toBeGreaterThanOrEqual(190);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('writes at once when a batch is full, and fails every item of a batch whose write failed', async () => {
    const { commit, batches } = recorded(1_000, 3);
    const started = performance.now();
    await Promise.all([commit.add(1), commit.add(2), commit.add(3)]);
    expect(performance.now() - started).toBeLessThan(500);
    expect(batches).toEqual([[1, 2, 3]]);
    const failing = new GroupCommit<number, number>(async () => {
      throw new Error('disk full');
    });
    await expect(Promise.all([failing.add(1), failing.add(2)])).rejects.toThrow('disk full');
  });
});
