import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DistinctSketch } from '../../src/modules/analytics/distinct-sketch.ts';

const sketchOf = (values: Iterable<string>) => {
  const s = new DistinctSketch();
  for (const v of values) s.add(v);
  return s;
};
const range = (from: number, to: number, prefix = 'visitor-') => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);

describe('DistinctSketch', () => {
  it('counts a small set exactly, however its values repeat and however it is split and merged', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 300 }), fc.nat(300), (values, cut) => {
        const merged = sketchOf(values.slice(0, cut)).merge(sketchOf(values.slice(cut)));
        expect(merged.exact).toBe(true);
        expect(merged.count()).toBe(new Set(values).size);
        expect(DistinctSketch.from(merged.toBuffer()).count()).toBe(new Set(values).size);
      }),
    );
  });

  it('estimates a large set within 2 %, and merging days with the same viewers does not count them twice', () => {
    for (const n of [5_000, 40_000, 300_000]) {
      const s = sketchOf(range(0, n));
      expect(s.exact).toBe(false);
      expect(Math.abs(s.count() - n) / n).toBeLessThan(0.02);
    }
    // Thirty days of 10,000 viewers each, half of whom come back every day.
    const days = Array.from({ length: 30 }, (_, d) => sketchOf([...range(0, 5_000), ...range(5_000 + d * 5_000, 10_000 + d * 5_000)]));
    const total = days.reduce((all, day) => all.merge(DistinctSketch.from(day.toBuffer())), new DistinctSketch());
    const truth = 5_000 + 30 * 5_000;
    expect(Math.abs(total.count() - truth) / truth).toBeLessThan(0.02);
  });

  it('a sparse sketch merged into a dense one, and a dense one into a sparse one, agree', () => {
    const big = range(0, 20_000);
    const small = range(19_000, 21_000, 'visitor-');
    const a = sketchOf(big).merge(sketchOf(small));
    const b = sketchOf(small).merge(sketchOf(big));
    expect(a.count()).toBe(b.count());
    expect(a.toBuffer().equals(b.toBuffer())).toBe(true);
  });

  it('merging stored bytes equals merging the sketch they store, sparse or dense, into either', () => {
    const big = range(0, 20_000);
    const small = range(19_000, 21_000, 'visitor-');
    for (const [into, stored] of [
      [small, big],
      [big, small],
      [small, range(20_500, 21_500, 'visitor-')],
    ]) {
      const merged = sketchOf(into).merge(sketchOf(stored));
      const fromBytes = sketchOf(into).mergeBytes(sketchOf(stored).toBuffer());
      expect(fromBytes.toBuffer().equals(merged.toBuffer())).toBe(true);
    }
  });

  it('refuses bytes that are not a sketch', () => {
    expect(() => DistinctSketch.from(Buffer.from([7, 1, 2]))).toThrow(/encoding/);
    expect(() => DistinctSketch.from(Buffer.from([1, 0]))).toThrow(/size/);
    expect(DistinctSketch.from(null).count()).toBe(0);
  });
});
