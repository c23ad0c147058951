/**
 * Counts hits per key in a fixed window that starts with a key's first hit: once `max` hits are
 * counted the key is blocked until its window has passed. In memory, per process; bounded, so that
 * keys made up by a caller (addresses, say) cannot grow it without limit.
 */
export class WindowCounter {
  private readonly hits = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly capacity = 10_000,
  ) {}

  private current(key: string) {
    const entry = this.hits.get(key);
    if (entry && this.now() - entry.since >= this.windowMs) {
      this.hits.delete(key);
      return undefined;
    }
    return entry;
  }

  blocked(key: string): boolean {
    return (this.current(key)?.count ?? 0) >= this.max;
  }

  /** Seconds until the key's window has passed (0 when nothing is counted). */
  retryAfterSeconds(key: string): number {
    const entry = this.current(key);
    return entry ? Math.max(1, Math.ceil((entry.since + this.windowMs - this.now()) / 1000)) : 0;
  }

  hit(key: string): void {
    const entry = this.current(key);
    if (entry) entry.count++;
    else {
      if (this.hits.size >= this.capacity) this.hits.clear();
      this.hits.set(key, { count: 1, since: this.now() });
    }
  }

  forget(key: string): void {
    this.hits.delete(key);
  }
}
