/** What a CTA's place on the track needs: its second and how long it shows (5 s when it shows until closed). */
export interface Timed {
  id: number;
  second: number;
  duration?: number | null;
}
/** How many seconds of the track a CTA takes: its duration, or 5 s when it shows until closed; at least 1. */
export const shownSeconds = (cta: Pick<Timed, 'duration'>): number => Math.max(1, cta.duration ?? 5);

/**
 * The lane of each CTA on the track: CTAs shown at the same time go one under the other, each on the
 * first lane free at its second (in order of second), so that none hides another.
 */
export function lanesOf(ctas: ReadonlyArray<Timed>): Map<number, number> {
  const ends: number[] = [];
  const lanes = new Map<number, number>();
  for (const c of [...ctas].sort((a, b) => a.second - b.second || a.id - b.id)) {
    let lane = ends.findIndex((end) => end <= c.second);
    if (lane === -1) lane = ends.length;
    ends[lane] = c.second + shownSeconds(c);
    lanes.set(c.id, lane);
  }
  return lanes;
}
