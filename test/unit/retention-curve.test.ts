import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addEdges, curveOf, edgesOfText, edgesToText, retentionDeltas, type Edges, type PlayedReport } from '../../src/modules/analytics/retention-curve.ts';

const DAY_MS = 86_400_000;

/** Reports of a few views of one video, each with a stretch, at random times over two days. */
const reportsArb = fc.array(
  fc.record({
    view: fc.nat(5),
    from: fc.double({ min: 0, max: 30, noNaN: true }),
    length: fc.double({ min: 0, max: 30, noNaN: true }),
    at: fc.nat(2 * DAY_MS - 1),
  }),
  { minLength: 1, maxLength: 30 },
);

const reportOf = (r: { view: number; from: number; length: number; at: number }, id: number): PlayedReport => ({
  id,
  organization_id: 1,
  video_id: 1,
  session_id: `load-${r.view}`,
  chapter: 0,
  created_at: r.at,
  watched: JSON.stringify([[r.from, r.from + r.length]]),
});

/** The curve of the reports' views, by the sweep per view the rollups replaced (stretches to the tenth). */
function sweep(reports: PlayedReport[], seconds: number | null) {
  const views = new Map<string, Array<[number, number]>>();
  for (const r of reports) views.set(r.session_id, [...(views.get(r.session_id) ?? []), ...edgesOfText(r.watched)]);
  const merged = [...views.values()].map((list) => {
    const sorted = list.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
    const out: Array<[number, number]> = [];
    for (const [a, b] of sorted) {
      const last = out[out.length - 1];
      if (last && a <= last[1]) last[1] = Math.max(last[1], b);
      else out.push([a, b]);
    }
    // To the tenth; a stretch shorter than that may round to nothing.
    return out.map(([a, b]) => [Math.round(a * 10) / 10, Math.round(b * 10) / 10] as [number, number]).filter(([a, b]) => b > a);
  });
  let longest = 0;
  for (const list of merged) for (const [, b] of list) longest = Math.max(longest, b);
  const duration = seconds ?? Math.ceil(longest);
  const count = duration <= 600 ? Math.max(1, Math.ceil(duration)) : 200;
  const step = duration <= 600 ? 1 : duration / count;
  return Array.from({ length: count }, (_, i) => merged.filter((list) => list.some(([a, b]) => a <= i * step + step / 2 && i * step + step / 2 < b)).length);
}

describe('retention curve from edges', () => {
  it('is the per-view sweep, however the reports are split into batches and the days added', () => {
    fc.assert(
      fc.property(reportsArb, fc.array(fc.nat(30), { maxLength: 4 }), fc.constantFrom(null, 12, 700), (raw, cuts, seconds) => {
        // In id order: the batches are consecutive slices, each with the reports before it as earlier.
        const reports = raw.map((r, i) => reportOf(r, i + 1));
        const bounds = [...new Set([0, ...cuts.map((c) => Math.min(c, reports.length)), reports.length])].sort((a, b) => a - b);
        const days = new Map<number, { views: number; edges: string }>();
        for (let i = 1; i < bounds.length; i++) {
          for (const d of retentionDeltas(reports.slice(bounds[i - 1], bounds[i]), reports.slice(0, bounds[i - 1]))) {
            const kept = days.get(d.day) ?? { views: 0, edges: '[]' };
            days.set(d.day, { views: kept.views + d.views, edges: edgesToText(addEdges(d.edges, edgesOfText(kept.edges))) });
          }
        }
        const edges: Edges = new Map();
        let views = 0;
        for (const day of days.values()) {
          views += day.views;
          addEdges(edges, edgesOfText(day.edges));
        }
        const curve = curveOf(edges, views, seconds);
        const expected = sweep(reports, seconds);
        expect(views).toBe(new Set(reports.map((r) => r.session_id)).size);
        expect(curve.points.map((p) => p.share)).toEqual(expected.map((n) => (views > 0 ? Math.round((n / views) * 10_000) / 10_000 : 0)));
        // Each view on the day of its first report (by id, whatever the clocks of the later ones).
        for (const [day, { views: n }] of days) {
          const first = new Map<string, number>();
          for (const r of reports) if (!first.has(r.session_id)) first.set(r.session_id, r.created_at);
          expect(n).toBe([...first.values()].filter((at) => Math.floor(at / DAY_MS) * DAY_MS === day).length);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
