import { describe, expect, it } from 'vitest';
import { lanesOf } from '../../dashboard/src/lanes.ts';

describe("the timeline's lanes", () => {
  it('puts CTAs shown at the same time one under the other, and the others on the first lane', () => {
    const lanes = lanesOf([
      { id: 1, second: 2, duration: 6 }, // 2-8
      { id: 2, second: 2, duration: 5 }, // 2-7: beside 1
      { id: 3, second: 7, duration: 2 }, // 7-9: the first lane is free from 5
      { id: 4, second: 8, duration: 1 }, // 8-9: the second lane is free from 8
      { id: 5, second: 0, duration: null }, // until closed: 0-5, the first lane, before 1
    ]);
    expect(Object.fromEntries(lanes)).toEqual({ 5: 0, 1: 1, 2: 2, 3: 0, 4: 1 });
  });

  it('never gives two CTAs that overlap the same lane', () => {
    for (let run = 0; run < 200; run++) {
      const ctas = Array.from({ length: 12 }, (_, id) => ({
        id,
        second: Math.floor(Math.random() * 30),
        duration: Math.random() < 0.2 ? null : 1 + Math.floor(Math.random() * 10),
      }));
      const lanes = lanesOf(ctas);
      const end = (c: (typeof ctas)[number]) => c.second + (c.duration ?? 5);
      for (const a of ctas)
        for (const b of ctas) if (a.id < b.id && lanes.get(a.id) === lanes.get(b.id)) expect(a.second >= end(b) || b.second >= end(a)).toBe(true);
      // As few lanes as the most CTAs shown at one second.
      const most = Math.max(...Array.from({ length: 45 }, (_, s) => ctas.filter((c) => c.second <= s && s < end(c)).length));
      expect(Math.max(...lanes.values()) + 1).toBe(most);
    }
  });
});
