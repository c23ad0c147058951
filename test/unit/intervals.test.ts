import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketKeyOf, bucketsOf, DAY_MS, type Interval } from '../../src/modules/analytics/intervals.ts';

describe('the intervals of a timeseries', () => {
  it('every instant of a period falls in the one listed interval that starts at or before it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Interval>('hour', 'day', 'week', 'month'),
        fc.integer({ min: 0, max: 40_000 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (interval, firstDay, days, where) => {
          const fromMs = firstDay * DAY_MS;
          const toMs = fromMs + (interval === 'hour' ? Math.min(days, 31) : days) * DAY_MS;
          const at = fromMs + (where % (toMs - fromMs));
          const buckets = bucketsOf(interval, fromMs, toMs);
          const key = bucketKeyOf(interval, at);
          const i = buckets.findIndex((b) => b.key === key);
          expect(i).toBeGreaterThanOrEqual(0);
          expect(Date.parse(buckets[i].start)).toBeLessThanOrEqual(at);
          if (i + 1 < buckets.length) expect(Date.parse(buckets[i + 1].start)).toBeGreaterThan(at);
        },
      ),
    );
  });

  it('weeks start on Monday, months on the first (UTC)', () => {
    expect(bucketKeyOf('week', Date.parse('2026-12-02T15:00:00Z'))).toBe(String(Date.parse('2026-11-30T00:00:00Z')));
    expect(bucketKeyOf('month', Date.parse('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
    expect(bucketKeyOf('day', Date.parse('2026-12-02T00:00:00Z') - 1)).toBe(String(Date.parse('2026-12-01T00:00:00Z')));
  });
});
