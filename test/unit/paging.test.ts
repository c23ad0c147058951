import { describe, expect, it } from 'vitest';
import { nearerEnd, startOf } from '../../src/db/paging.ts';

describe('startOf: where the entry at an offset is, from a list’s counts per run of ids', () => {
  const runs = [
    { bucket: 0, n: 3 },
    { bucket: 2, n: 0 },
    { bucket: 5, n: 4 },
    { bucket: 9, n: 1 },
  ];
  it('the first id of the offset’s run and the entries of that run before it', () => {
    expect(startOf(runs, 0, 4)).toEqual({ fromId: 0, skip: 0 });
    expect(startOf(runs, 2, 4)).toEqual({ fromId: 0, skip: 2 });
    // An empty run is passed over.
    expect(startOf(runs, 3, 4)).toEqual({ fromId: 5 * 16, skip: 0 });
    expect(startOf(runs, 6, 4)).toEqual({ fromId: 5 * 16, skip: 3 });
    expect(startOf(runs, 7, 4)).toEqual({ fromId: 9 * 16, skip: 0 });
  });
  it('null past the counted entries, and for no runs', () => {
    expect(startOf(runs, 8, 4)).toBeNull();
    expect(startOf([], 0)).toBeNull();
  });
  it('takes counts as the drivers give them (bigint columns may come as strings)', () => {
    expect(startOf([{ bucket: 1, n: '2' as unknown as number }], 1, 12)).toEqual({ fromId: 4096, skip: 1 });
  });
});

describe('nearerEnd', () => {
  it('reads a page in the later half from the end', () => {
    expect(nearerEnd({ limit: 10, offset: 0 }, 100)).toEqual({ limit: 10, offset: 0, reversed: false });
    expect(nearerEnd({ limit: 10, offset: 80 }, 100)).toEqual({ limit: 10, offset: 10, reversed: true });
    expect(nearerEnd({ limit: 10, offset: 95 }, 100)).toEqual({ limit: 5, offset: 0, reversed: true });
    expect(nearerEnd({ limit: 10, offset: 100 }, 100)).toBeNull();
    expect(nearerEnd({ limit: 10, offset: 500 }, undefined)).toEqual({ limit: 10, offset: 500, reversed: false });
  });
});
