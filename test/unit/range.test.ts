import { describe, expect, it } from 'vitest';
import { parseRange } from '../../src/media/range.ts';

describe('parseRange', () => {
  const size = 1000;

  it('reads single byte ranges, clamping the end to the file', () => {
    expect(parseRange('bytes=0-99', size)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=100-', size)).toEqual({ start: 100, end: 999 });
    expect(parseRange('bytes=990-5000', size)).toEqual({ start: 990, end: 999 });
    expect(parseRange('bytes=999-999', size)).toEqual({ start: 999, end: 999 });
    expect(parseRange('BYTES = 5 - 9', size)).toEqual({ start: 5, end: 9 });
  });

  it('reads suffix ranges (the last N bytes)', () => {
    expect(parseRange('bytes=-10', size)).toEqual({ start: 990, end: 999 });
    expect(parseRange('bytes=-5000', size)).toEqual({ start: 0, end: 999 });
  });

  it('answers unsatisfiable for valid ranges that start past the end', () => {
    expect(parseRange('bytes=1000-', size)).toBe('unsatisfiable');
    expect(parseRange('bytes=1000-2000', size)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', size)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=-5', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=2000-,3000-', size)).toBe('unsatisfiable');
  });

  it('ignores what it cannot or need not honour (whole file): no header, other units, malformed, several ranges', () => {
    for (const header of [
      undefined,
      '',
      'items=0-1',
      'bytes=',
      'bytes=a-b',
      'bytes=-',
      'bytes=5-2',
      'bytes=0-1,',
      'bytes=0-1;2-3',
      'bytes=1.5-2',
      'bytes=0-10,20-30',
      'bytes=0-10,2000-',
    ]) {
      expect(parseRange(header, size), String(header)).toBeNull();
    }
  });
});
