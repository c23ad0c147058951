import { DAY_MS, ratio, tenths } from './intervals.ts';

/**
 * A video's audience retention as it adds up from day to day (docs/analytics.md, "A video's
 * retention"): its views, and its edges, at each second where a view's merged stretches start (+1)
 * or end (−1), the net change in viewers. A point of the curve is watched by the sum of the edges up to
 * its middle, so the curve of a period is that of its days' edges added, whatever the video's length.
 */
export type Edges = Map<number, number>;

/** A report that plays a view (its start, or an attention span with its stretches). */
export interface PlayedReport {
  id: number;
  organization_id: number;
  video_id: number;
  session_id: string;
  chapter: number;
  created_at: number;
  /** An attention span's merged stretches (JSON), or null. */
  watched: string | null;
}

/** What a range of reports adds to a video's day: the views that started then, and their edges. */
export interface RetentionDelta {
  organization_id: number;
  video_id: number;
  day: number;
  views: number;
  edges: Edges;
}

/** Sorted, merged stretches of [from, to] seconds. */
export function mergeStretches(stretches: Array<[number, number]>): Array<[number, number]> {
  const sorted = stretches.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const merged: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}

/** Adds `delta` at `second`; an edge that nets to nothing goes. */
function addEdge(into: Edges, second: number, delta: number): void {
  const sum = (into.get(second) ?? 0) + delta;
  if (sum === 0) into.delete(second);
  else into.set(second, sum);
}

/** Adds other edges (a kept day's, as stored) to `into`. */
export function addEdges(into: Edges, other: Iterable<[number, number]>): Edges {
  for (const [second, delta] of other) addEdge(into, second, delta);
  return into;
}

export const edgesToText = (edges: Edges): string => JSON.stringify([...edges].sort((x, y) => x[0] - y[0]));
export const edgesOfText = (text: string | null): Array<[number, number]> => (text ? (JSON.parse(text) as Array<[number, number]>) : []);

/**
 * Edges are kept to the tenth of a second: the player reports the media's exact times, and a popular
 * video's day would otherwise keep two edges per view. So a day keeps at most ten edges per second of
 * the video, and a point's viewers are counted within 0.05 s of its middle.
 */
const tenth = (second: number) => Math.round(second * 10) / 10;

const viewKey = (r: PlayedReport) => `${r.organization_id}\n${r.video_id}\n${r.session_id}\n${r.chapter}`;
const stretchesOf = (reports: PlayedReport[]) => mergeStretches(reports.flatMap((r) => edgesOfText(r.watched)));

/**
 * What `reports` add to their views' days, given each view's `earlier` reports (those already
 * counted): a view is counted on the UTC day of its first report (by id), once, and its edges are those of
 * its merged stretches, so a second watched again, or reported again by a later batch, counts once.
 */
export function retentionDeltas(reports: PlayedReport[], earlier: PlayedReport[]): RetentionDelta[] {
  const views = new Map<string, { now: PlayedReport[]; before: PlayedReport[] }>();
  for (const r of reports) {
    const key = viewKey(r);
    if (!views.has(key)) views.set(key, { now: [], before: [] });
    views.get(key)!.now.push(r);
  }
  for (const r of earlier) views.get(viewKey(r))?.before.push(r);
  const days = new Map<string, RetentionDelta>();
  for (const { now, before } of views.values()) {
    // Its first report by id: the one that counted it, whatever the clocks of the reports after it.
    const first = [...before, ...now].reduce((x, y) => (y.id < x.id ? y : x));
    const day = Math.floor(first.created_at / DAY_MS) * DAY_MS;
    const { organization_id, video_id } = now[0];
    const key = `${organization_id}\n${video_id}\n${day}`;
    if (!days.has(key)) days.set(key, { organization_id, video_id, day, views: 0, edges: new Map() });
    const into = days.get(key)!;
    if (before.length === 0) into.views++;
    const old = stretchesOf(before);
    for (const [a, b] of stretchesOf([...before, ...now])) {
      addEdge(into.edges, tenth(a), 1);
      addEdge(into.edges, tenth(b), -1);
    }
    for (const [a, b] of old) {
      addEdge(into.edges, tenth(a), -1);
      addEdge(into.edges, tenth(b), 1);
    }
  }
  return [...days.values()];
}

/** For each second (each of 200 points of a video longer than 10 minutes), the views watching its middle; and the three points where the most left. */
export function curveOf(edges: Edges, views: number, seconds: number | null) {
  // The last edge is where the last stretch ends.
  let longest = 0;
  for (const second of edges.keys()) if (second > longest) longest = second;
  const duration = seconds ?? Math.ceil(longest);
  const count = duration <= RETENTION_SECONDS ? Math.max(1, Math.ceil(duration)) : RETENTION_POINTS;
  const step = duration <= RETENTION_SECONDS ? 1 : duration / count;
  // A stretch [a, b) covers the points whose middle m has a <= m < b: its +1 lands on the first such
  // point, its −1 on the first point past it (both within [0, count]).
  const delta = new Array<number>(count + 1).fill(0);
  for (const [second, d] of edges) delta[Math.min(count, Math.max(0, Math.ceil((second - step / 2) / step)))] += d;
  const watching: number[] = [];
  for (let i = 0, n = 0; i < count; i++) watching.push((n += delta[i]));
  const share = (n: number) => ratio(n, views);
  const points = watching.map((n, i) => ({ second: tenths(i * step), share: share(n) }));
  const drops = watching
    .slice(1)
    .map((n, i) => ({ second: points[i + 1].second, lost: watching[i] - n }))
    .filter((d) => d.lost > 0)
    .sort((x, y) => y.lost - x.lost || x.second - y.second)
    .slice(0, 3)
    .map((d) => ({ second: d.second, share_lost: share(d.lost) }));
  return { duration, views, interval_seconds: step, points, drop_offs: drops };
}

const RETENTION_SECONDS = 600;
const RETENTION_POINTS = 200;
