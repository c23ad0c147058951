/**
 * The intervals of a timeseries, as the repository groups reports into them and the service lists
 * them (with those without reports): hours, days and weeks are fixed lengths of milliseconds (weeks
 * from a Monday), months are calendar months (UTC).
 */
export type Interval = 'hour' | 'day' | 'week' | 'month';

const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, a Monday: weeks are counted from it. */
const MONDAY_MS = 4 * DAY_MS;

/** Length of a fixed interval in milliseconds. */
export function intervalMs(interval: Exclude<Interval, 'month'>): number {
  return interval === 'hour' ? HOUR_MS : interval === 'day' ? DAY_MS : WEEK_MS;
}

/** Where a fixed interval's count starts: weeks from a Monday, the others from the epoch. */
export function intervalOffsetMs(interval: Exclude<Interval, 'month'>): number {
  return interval === 'week' ? MONDAY_MS : 0;
}

/** Every interval of [fromMs, toMs), keyed as the repository keys them: the start in ms, or YYYY-MM for a month. */
export function bucketsOf(interval: Interval, fromMs: number, toMs: number): Array<{ key: string; start: string }> {
  const out: Array<{ key: string; start: string }> = [];
  if (interval === 'month') {
    const d = new Date(fromMs);
    for (let y = d.getUTCFullYear(), m = d.getUTCMonth(); Date.UTC(y, m, 1) < toMs; m === 11 ? ((m = 0), y++) : m++) {
      const start = new Date(Date.UTC(y, m, 1)).toISOString();
      out.push({ key: start.slice(0, 7), start });
    }
    return out;
  }
  const size = intervalMs(interval);
  const offset = intervalOffsetMs(interval);
  for (let at = Math.floor((fromMs - offset) / size) * size + offset; at < toMs; at += size) out.push({ key: String(at), start: new Date(at).toISOString() });
  return out;
}

/** The key (as bucketsOf keys it) of the interval that holds the instant `ms`. */
export function bucketKeyOf(interval: Interval, ms: number): string {
  if (interval === 'month') return new Date(ms).toISOString().slice(0, 7);
  const size = intervalMs(interval);
  const offset = intervalOffsetMs(interval);
  return String(Math.floor((ms - offset) / size) * size + offset);
}

/** Seconds as answered: to the tenth. */
export const tenths = (seconds: number) => Math.round(seconds * 10) / 10;

/** A share as answered: to four decimals (0 of nothing). */
export const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 10_000) / 10_000 : 0);
